import Foundation
import Synchronization
import Testing
@testable import Tandem
@testable import TandemPostgres

/// One contract for every backend: each test runs against the embedded backend and the
/// in-memory one (and, as backends are added, against them too).
@Suite struct BackendConformanceTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case embedded, memory, postgres
        var testDescription: String { rawValue }
        /// Postgres only when a test server is configured.
        static var available: [Kind] { TestPostgres.url == nil ? [.embedded, .memory] : allCases }
        /// Backends whose server other applications write in their own transactions, which
        /// may commit in another order than they started and may stay open (PostgreSQL).
        static var withForeignTransactions: [Kind] { available.filter { $0 == .postgres } }

        /// The columns the contract tests write, for backends with typed tables.
        static let schema = Schema(tables: [
            TableSchema(
                name: "notes",
                columns: [
                    .text("title"), .integer("done"), .real("r"), .real("z"), .integer("i"), .text("t"), .text("n"),
                ])
        ])

        func make(in dir: TemporaryDirectory) throws -> any SyncBackend {
            switch self {
            case .embedded: return try EmbeddedBackend(path: dir.path("server.db"))
            case .memory: return MemoryBackend()
            case .postgres: return try PostgresBackend(conninfo: try TestPostgres.database(schema: Kind.schema))
            }
        }
    }

    /// A row's state without its NULL columns: a NULL column reads back NULL whether a backend
    /// stores it as null or leaves it out (typed tables have every column).
    private func nonNull(_ data: String?) throws -> JSONValue {
        guard case .object(let object) = try JSONValue(parsing: data ?? "null") else { return .null }
        return .object(object.filter { $0.value != .null })
    }

    private func transaction(_ id: Int64, _ entries: [(CrudEntry.Operation, String, [String: JSONValue]?)]) -> CrudTransaction {
        CrudTransaction(
            transactionID: id,
            entries: entries.enumerated().map { index, entry in
                CrudEntry(id: id * 100 + Int64(index), transactionID: id, op: entry.0, table: "notes", rowID: entry.1, data: entry.2)
            })
    }

    /// Where a client that has applied everything so far stands: the beginning for backends
    /// that keep their whole log, the cursor after a first (full) sync for the others, from
    /// which their change log reads the changes made since.
    private func origin(_ backend: any SyncBackend) throws -> String {
        backend is PostgresBackend ? try settledCursor(backend) : ""
    }

    /// Every change after `origin` (``origin(_:)``), fetched two at a time.
    private func allChanges(_ backend: any SyncBackend, from origin: String) throws -> [ServerChange] {
        var changes: [ServerChange] = [], cursor = origin, more = true
        while more {
            let batch = try backend.fetchChanges(after: cursor, limit: 2)
            changes += batch.changes
            if batch.nextCursor == cursor { break }
            cursor = batch.nextCursor
            more = batch.hasMore
        }
        return changes
    }

    @Test(arguments: Kind.available) func uploadsApplyOncePerClientAndTransaction(kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let backend = try kind.make(in: dir)
        let start = try origin(backend)
        let first = transaction(1, [(.put, "a", ["title": .string("x")])])
        try backend.upload([first], clientID: "c1", epoch: 1)
        try backend.upload([first], clientID: "c1", epoch: 1)  // a retry after a crash
        #expect(try allChanges(backend, from: start).count == 1)
        try backend.upload([first], clientID: "c2", epoch: 1)  // another client's transaction 1
        #expect(try allChanges(backend, from: start).count == 2)
        let reused = transaction(1, [(.put, "b", ["title": .string("other")])])
        #expect(throws: TandemError.transactionConflict(clientID: "c1", transactionID: 1, highest: 1)) {
            try backend.upload([reused], clientID: "c1", epoch: 1)
        }
    }

    /// Retries that straddle earlier batches, or pick one transaction out of one, apply only the
    /// transactions not applied before; a transaction id inside an earlier batch with other
    /// entries is refused, naming the highest id applied.
    @Test(arguments: Kind.available) func retriesAcrossBatchesApplyOnlyNewTransactions(kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let backend = try kind.make(in: dir)
        let start = try origin(backend)
        func batch(_ ids: [Int64]) -> [CrudTransaction] {
            ids.map { transaction($0, [(.put, "r\($0)", ["title": .string("t\($0)")])]) }
        }
        try backend.upload(batch(Array(1...10)), clientID: "c", epoch: 1)
        try backend.upload(batch([12, 14, 15, 16, 20]), clientID: "c", epoch: 1)  // ids with gaps
        try backend.upload(batch([7]), clientID: "c", epoch: 1)  // one out of the first batch
        try backend.upload(batch([5, 6, 11, 12, 13, 15, 20, 21, 22]), clientID: "c", epoch: 1)  // straddles both
        let applied = try allChanges(backend, from: start).map(\.rowID)
        #expect(applied == (Array(1...10) + [12, 14, 15, 16, 20, 11, 13, 21, 22]).map { "r\($0)" }, "each transaction once, in upload order")
        #expect(throws: TandemError.transactionConflict(clientID: "c", transactionID: 15, highest: 22)) {
            try backend.upload(batch([23]) + [transaction(15, [(.put, "other", [:])])], clientID: "c", epoch: 1)
        }
        #expect(throws: TandemError.transactionConflict(clientID: "c", transactionID: 3, highest: 22)) {
            try backend.upload([transaction(3, [(.delete, "r3", nil)])], clientID: "c", epoch: 1)
        }
        #expect(try allChanges(backend, from: start).count == applied.count, "a refused batch applies nothing")
    }

    @Test(arguments: Kind.available) func anOlderEpochIsRefused(kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let backend = try kind.make(in: dir)
        let start = try origin(backend)
        try backend.upload([transaction(1, [(.put, "a", [:])])], clientID: "c1", epoch: 3)
        #expect(throws: TandemError.staleEpoch(held: 2, current: 3)) {
            try backend.upload([transaction(2, [(.put, "b", [:])])], clientID: "c1", epoch: 2)
        }
        #expect(try allChanges(backend, from: start).map(\.rowID) == ["a"])
    }

    /// The conflict rule: a PATCH of a deleted row changes nothing and logs the deletion.
    @Test(arguments: Kind.available) func theDeleteWinsOverAConcurrentUpdate(kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let backend = try kind.make(in: dir)
        let start = try origin(backend)
        try backend.upload([transaction(1, [(.put, "r", ["title": .string("first"), "done": .integer(0)])])], clientID: "a", epoch: 1)
        try backend.upload([transaction(2, [(.delete, "r", nil)])], clientID: "a", epoch: 1)
        try backend.upload([transaction(1, [(.patch, "r", ["title": .string("edited offline")])])], clientID: "b", epoch: 1)
        let last = try #require(try allChanges(backend, from: start).last)
        #expect(last.op == .delete && last.rowID == "r")
        try backend.upload([transaction(2, [(.put, "r", ["title": .string("again")])])], clientID: "b", epoch: 1)
        let revived = try #require(try allChanges(backend, from: start).last)
        let revivedState = try nonNull(revived.data)
        #expect(revived.op == .put && revivedState == .object(["title": .string("again")]))
    }

    /// A PATCH changes only its columns; the logged state is the whole row, values keeping their kind.
    @Test(arguments: Kind.available) func patchesMergeIntoWholeRowsKeepingKinds(kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let backend = try kind.make(in: dir)
        let start = try origin(backend)
        // PostgreSQL text cannot hold NUL: that backend stores it escaped, and it reads back as written.
        let text = "a\u{0}b\u{FFFF}"
        let values: [String: JSONValue] = ["r": .double(2.0), "z": .double(-0.0), "i": .integer(.min), "t": .string(text), "n": .null]
        try backend.upload([transaction(1, [(.put, "x", values)])], clientID: "a", epoch: 1)
        try backend.upload([transaction(2, [(.patch, "x", ["t": .string("2.0")])])], clientID: "a", epoch: 1)
        var expected = values
        expected["t"] = .string("2.0")
        expected["n"] = nil  // a NULL column reads back NULL whether stored or absent
        guard case .object(let got) = try nonNull(try #require(try allChanges(backend, from: start).last?.data)) else { Issue.record("not an object"); return }
        #expect(got == expected)
        if case .double(let z)? = got["z"] { #expect(z.sign == .minus) }
    }

    @Test(arguments: Kind.available) func downloadsNeverSplitATransaction(kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let backend = try kind.make(in: dir)
        let start = try origin(backend)
        try backend.upload([transaction(1, [(.put, "a", [:]), (.put, "b", [:]), (.put, "c", [:])])], clientID: "a", epoch: 1)
        try backend.upload([transaction(2, [(.put, "d", [:])])], clientID: "a", epoch: 1)
        let first = try backend.fetchChanges(after: start, limit: 1)
        #expect(first.changes.map(\.rowID) == ["a", "b", "c"])
        #expect(first.hasMore)
        let second = try backend.fetchChanges(after: first.nextCursor, limit: 1)
        #expect(second.changes.map(\.rowID) == ["d"] && !second.hasMore)
    }

    @Test(arguments: Kind.available) func aWaitWakesOnANewChange(kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let backend = try kind.make(in: dir)
        // Another client's upload (a backend's waits leave out its own uploads, which the owner
        // downloads after uploading).
        let other: any SyncBackend =
            switch backend {
            case let postgres as PostgresBackend: try PostgresBackend(conninfo: postgres.conninfo)
            case is EmbeddedBackend: try kind.make(in: dir)
            default: backend
            }
        var start = try origin(backend)
        if kind == .embedded {
            // A wait from no cursor at all answers at once (a first sync is due): this one
            // waits from a first change on.
            try other.upload([transaction(1, [(.put, "first", [:])])], clientID: "b", epoch: 1)
            start = try backend.fetchChanges(after: start, limit: 10).nextCursor
        }
        let woke = Mutex<String??>(nil)
        let waiter = Thread { [start] in woke.withLock { $0 = .some(try? backend.waitForChanges(after: start, timeout: .seconds(10))) } }
        waiter.start()
        try other.upload([transaction(2, [(.put, "a", [:])])], clientID: "b", epoch: 1)
        try waitUntil(timeout: 5, "the waiter to wake") { woke.withLock { $0 } != nil }
        let cursor = try #require(woke.withLock { $0 } ?? nil)
        if kind != .postgres {
            #expect(cursor == (kind == .embedded ? "2" : "1"))
            let newest = try backend.fetchChanges(after: start, limit: 10).nextCursor
            #expect(newest == cursor, "the wait returns the newest change's cursor")
        } else {
            // Snapshot cursors of a shared cluster move with every other transaction: the wait's
            // cursor is at or after the change (it looked), or the start itself (a notification
            // announced the change), and the change lies after the start. Either way a wait from
            // it answers for later changes only.
            #expect(try backend.fetchChanges(after: start, limit: 10).changes.map(\.rowID) == ["a"])
            #expect(
                try cursor == start || backend.fetchChanges(after: cursor, limit: 10).changes.isEmpty,
                "the wait returns the start or a cursor at or after the newest change")
            // A client downloads from the wait's cursor and waits from where that left it (a wait
            // from the start itself may look and see the change after it: the contract lets a
            // look answer once more). The change wakes no later wait.
            let applied = try backend.fetchChanges(after: cursor, limit: 10).nextCursor
            #expect(try backend.waitForChanges(after: applied, timeout: .milliseconds(300)) == nil, "the change wakes one wait")
        }
    }

    /// A wait is not woken by the backend's own uploads (the owner downloads after uploading),
    /// and is woken by anyone else's: another client's upload, another session's write.
    @Test(arguments: Kind.withForeignTransactions) func aWaitIsWokenByOthersOnly(kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let backend = try #require(try kind.make(in: dir) as? PostgresBackend)
        let start = try origin(backend)
        #expect(try backend.waitForChanges(after: start, timeout: .zero) == nil)
        try backend.upload([transaction(1, [(.put, "own", [:])])], clientID: "a", epoch: 1)
        #expect(try backend.waitForChanges(after: start, timeout: .seconds(1)) == nil, "its own upload wakes no wait")
        #expect(try allChanges(backend, from: start).map(\.rowID) == ["own"], "and is there to download")
        let other = try PostgresBackend(conninfo: backend.conninfo)
        try other.upload([transaction(1, [(.put, "other", [:])])], clientID: "b", epoch: 1)
        let woken = try #require(try backend.waitForChanges(after: start, timeout: .seconds(5)), "another client's upload wakes the wait")
        #expect(woken == start, "the notification announced the change: the wait did not look for it")
        #expect(try backend.waitForChanges(after: woken, timeout: .zero) == nil)
        let session = try PostgresConnection(backend.conninfo)
        try session.execute("INSERT INTO notes(id, title) VALUES ('psql', 'x')")
        let next = try #require(try backend.waitForChanges(after: woken, timeout: .seconds(5)), "another session's write wakes the wait")
        #expect(try allChanges(backend, from: woken).map(\.rowID) == ["own", "other", "psql"])
        #expect(try backend.waitForChanges(after: next, timeout: .zero) == nil)
    }

    /// The embedded backend's waits are not woken by the object's own uploads either, but by
    /// another object's (another client, another process) and by the first sync a client that
    /// never synced is due; versions an upload took and rolled back are not its own.
    @Test func anEmbeddedWaitIsWokenByOthersOnly() throws {
        let dir = try TemporaryDirectory()
        let backend = try EmbeddedBackend(path: dir.path("server.db"))
        let other = try EmbeddedBackend(path: dir.path("server.db"))
        #expect(try backend.waitForChanges(after: "", timeout: .seconds(5)) == "0", "an empty server: a first sync is due all the same")
        try backend.upload([transaction(1, [(.put, "first", [:])])], clientID: "a", epoch: 1)
        #expect(try backend.waitForChanges(after: "", timeout: .zero) != nil, "a client that never synced is due a first sync, its own uploads or not")
        let start = try backend.fetchChanges(after: "", limit: 10).nextCursor
        #expect(try backend.waitForChanges(after: start, timeout: .zero) == nil)
        try backend.upload([transaction(2, [(.put, "own", [:])])], clientID: "a", epoch: 1)
        #expect(try backend.waitForChanges(after: start, timeout: .milliseconds(300)) == nil, "its own upload wakes no wait")
        #expect(try allChanges(backend, from: start).map(\.rowID) == ["own"], "and is there to download")
        try other.upload([transaction(1, [(.put, "other", [:])])], clientID: "b", epoch: 1)
        let woken = try #require(try backend.waitForChanges(after: start, timeout: .seconds(5)), "another object's upload wakes the wait")
        #expect(try allChanges(backend, from: woken).isEmpty)
        // An upload that fails after writing (a transaction id applied before with other
        // entries) rolls back: another client's upload then takes the same versions.
        #expect(throws: TandemError.self) {
            try backend.upload([transaction(3, [(.put, "three", [:])]), transaction(2, [(.put, "changed", [:])])], clientID: "a", epoch: 1)
        }
        try other.upload([transaction(2, [(.put, "other-2", [:])])], clientID: "b", epoch: 1)
        let next = try #require(try backend.waitForChanges(after: woken, timeout: .seconds(5)), "versions a rolled-back upload took are not its own")
        #expect(try allChanges(backend, from: woken).map(\.rowID) == ["other-2"])
        #expect(try backend.waitForChanges(after: next, timeout: .zero) == nil)
        // Another process's upload wakes it too.
        try SharedDatabase(path: dir.path("c.db"), schema: notesSchema).execute("INSERT INTO notes(id, title) VALUES ('from-c', 'x')")
        #expect(try runTandem(["sync", dir.path("c.db"), "--backend", "sqlite:" + dir.path("server.db")]).status == 0)
        #expect(try backend.waitForChanges(after: next, timeout: .seconds(5)) != nil, "another process's upload wakes the wait")
        #expect(try allChanges(backend, from: next).map(\.rowID) == ["from-c"])
    }

    /// A change that sends no notification (here a row put into the change log by hand; a new
    /// grant is another) still wakes a wait: the listener looks at least every `lookInterval`.
    @Test(arguments: Kind.withForeignTransactions) func aChangeWithoutANotificationWakesAWaitInTime(kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let made = try #require(try kind.make(in: dir) as? PostgresBackend)
        let backend = try PostgresBackend(conninfo: made.conninfo, lookInterval: .milliseconds(300))
        let start = try origin(backend)
        #expect(try backend.waitForChanges(after: start, timeout: .zero) == nil)
        try PostgresConnection(backend.conninfo).execute(
            "INSERT INTO tandem_changes(op, type, id, data) VALUES ('PUT', 'notes', 'silent', '{\"title\": \"s\"}')")
        #expect(try backend.waitForChanges(after: start, timeout: .seconds(5)) != nil, "the change is found by the next look")
        #expect(try allChanges(backend, from: start).map(\.rowID) == ["silent"])
    }

    /// The change that committed last wins, whatever order the transactions started in: a
    /// transaction that started first (the older transaction id) and wrote last, by another
    /// application or by a client's upload, leaves its value on every client.
    @Test(arguments: Kind.withForeignTransactions) func theChangeCommittedLastWins(kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let backend = try #require(try kind.make(in: dir) as? PostgresBackend)
        try backend.upload([transaction(1, [(.put, "r", ["title": .string("v0")])])], clientID: "a", epoch: 1)
        let start = try origin(backend)
        // psql session S2 starts first and writes last; S1 writes in between and commits.
        let s1 = try PostgresConnection(backend.conninfo), s2 = try PostgresConnection(backend.conninfo)
        try s2.execute("BEGIN")
        try s2.execute("SELECT pg_current_xact_id()")
        try s1.execute("UPDATE notes SET title = 'v1' WHERE id = 'r'")
        try s2.execute("UPDATE notes SET title = 'v2' WHERE id = 'r'")
        try s2.execute("COMMIT")
        #expect(try title(of: "r", in: allChanges(backend, from: start)) == "v2")
        // The younger transaction is a client's upload: it commits first, the older psql one last.
        let older = try PostgresConnection(backend.conninfo)
        try older.execute("BEGIN")
        try older.execute("SELECT pg_current_xact_id()")
        try backend.upload([transaction(2, [(.patch, "r", ["title": .string("v3")])])], clientID: "a", epoch: 1)
        try older.execute("UPDATE notes SET title = 'v4' WHERE id = 'r'")
        try older.execute("COMMIT")
        #expect(try title(of: "r", in: allChanges(backend, from: start)) == "v4")
        // And a client database applying the feed ends with the server's value.
        let db = try SharedDatabase(path: dir.path("client.db"), schema: Kind.schema)
        _ = try db.sync.once(with: backend)
        #expect(try db.fetchAll("SELECT title FROM notes WHERE id = 'r'").first?[0] == .text("v4"))
        #expect(try s1.execute("SELECT title FROM notes WHERE id = 'r'").first?.first == "v4")
    }

    /// A write transaction left open (in this database, or in another database of the same
    /// cluster: transaction ids are cluster-wide) delays only its own changes: every other
    /// committed change arrives at once, and its own arrive when it commits, never skipped.
    @Test(arguments: Kind.withForeignTransactions) func aTransactionLeftOpenDelaysOnlyItself(kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let backend = try #require(try kind.make(in: dir) as? PostgresBackend)
        let start = try origin(backend)
        let elsewhere = try PostgresConnection(try #require(TestPostgres.url))  // another database
        try elsewhere.execute("BEGIN")
        try elsewhere.execute("SELECT pg_current_xact_id()")
        let open = try PostgresConnection(backend.conninfo)
        try open.execute("BEGIN")
        try open.execute("INSERT INTO notes(id, title) VALUES ('held', 'committed last')")
        defer { _ = try? elsewhere.execute("ROLLBACK") }
        var cursor = start
        for i in 0..<5 {
            try backend.upload([transaction(Int64(i + 1), [(.put, "n\(i)", ["title": .string("while open")])])], clientID: "a", epoch: 1)
            let batch = try backend.fetchChanges(after: cursor, limit: 100)
            #expect(batch.changes.map(\.rowID) == ["n\(i)"], "a committed change arrives while older transactions stay open")
            #expect(try backend.waitForChanges(after: batch.nextCursor, timeout: .zero) == nil, "nothing more is announced")
            cursor = batch.nextCursor
        }
        try open.execute("COMMIT")
        #expect(try backend.waitForChanges(after: cursor, timeout: .seconds(5)) != nil, "the held transaction's commit is announced")
        #expect(try backend.fetchChanges(after: cursor, limit: 100).changes.map(\.rowID) == ["held"])
    }

    private func title(of id: String, in changes: [ServerChange]) throws -> String? {
        guard let last = changes.last(where: { $0.rowID == id }), case .object(let row) = try JSONValue(parsing: last.data ?? "null"),
            case .string(let title)? = row["title"]
        else { return nil }
        return title
    }

    /// A batch of many transactions (PUT, PATCH and DELETE on few rows, in every order, a PATCH of
    /// a row that is gone, retries of transactions applied before, adversarial values) leaves the
    /// same rows as the reference model applying them one at a time.
    @Test(arguments: Kind.available) func aBatchAppliesLikeOneTransactionAtATime(kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let backend = try kind.make(in: dir)
        let start = try origin(backend)
        let reference = MemoryBackend()
        var generator = SystemRandomNumberGenerator()
        let integers: [JSONValue] = [.integer(.max), .integer(.min), .integer(0), .integer(-1), .null]
        let reals: [JSONValue] = [
            .double(2.0), .double(-0.0), .double(0.1), .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude),
            .double(123456789.12345678), .null,
        ]
        let texts: [JSONValue] = [
            .string(""), .string("007"), .string("\u{1}\t\n\r\u{1b}\u{7f}"), .string("{\"x\":1}"), .string("null"),
            .string("😀 Ünïcödé ☃ \u{301}e"), .string("'single' \"double\" \\ back"), .null,
        ]
        func values(_ columns: [String]) -> [String: JSONValue] {
            Dictionary(
                uniqueKeysWithValues: columns.map { column in
                    (column, (["done", "i"].contains(column) ? integers : ["r", "z"].contains(column) ? reals : texts).randomElement(using: &generator)!)
                })
        }
        let all = ["title", "done", "r", "z", "i", "t", "n"]
        var transactions: [CrudTransaction] = []
        var entryID: Int64 = 0
        for txID in Int64(1)...120 {
            let entries = (0..<Int.random(in: 1...4, using: &generator)).map { _ -> CrudEntry in
                entryID += 1
                let row = "r\(Int.random(in: 0..<8, using: &generator))"
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<4:
                    return CrudEntry(id: entryID, transactionID: txID, op: .put, table: "notes", rowID: row, data: values(all.filter { _ in Bool.random(using: &generator) }))
                case 4..<8:
                    return CrudEntry(
                        id: entryID, transactionID: txID, op: .patch, table: "notes", rowID: row,
                        data: values(Array(all.shuffled(using: &generator).prefix(Int.random(in: 1...3, using: &generator)))))
                default: return CrudEntry(id: entryID, transactionID: txID, op: .delete, table: "notes", rowID: row, data: nil)
                }
            }
            transactions.append(CrudTransaction(transactionID: txID, entries: entries))
        }
        for target in [backend, reference] as [any SyncBackend] {
            try target.upload(Array(transactions[0..<30]), clientID: "c", epoch: 1)
            try target.upload(Array(transactions[20..<120]), clientID: "c", epoch: 1)  // 20..<30 are retries
        }
        func finalRows(_ target: any SyncBackend, from cursor: String) throws -> [String: JSONValue] {
            var rows: [String: JSONValue] = [:]
            for change in try allChanges(target, from: cursor) {
                rows[change.rowID] = change.op == .put ? try nonNull(change.data) : nil
            }
            return rows
        }
        let got = try finalRows(backend, from: start), expected = try finalRows(reference, from: "")
        #expect(got == expected)
        for (id, row) in got {
            guard case .object(let columns) = row, case .object(let wanted)? = expected[id] else { continue }
            for (column, value) in columns {
                if case .double(let d) = value, case .double(let w)? = wanted[column] {
                    #expect(d.bitPattern == w.bitPattern, "\(id).\(column): \(d) against \(w)")
                }
            }
        }
    }
}
