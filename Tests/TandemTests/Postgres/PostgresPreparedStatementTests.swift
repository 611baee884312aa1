import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// A connection prepares a statement with parameters the second time it runs it, in the same
/// round trip, and executes it by name from then on: the same answers, on every path (one
/// statement, a pipeline, the upload's and the fetch's). A server that forgets the names (a
/// pooler's other session) and a table whose columns changed under a prepared `SELECT *` each
/// fail one statement, transiently, and the statement then runs again.
@Suite struct PostgresPreparedStatementBookkeepingTests {
    @Test func aStatementIsPreparedTheSecondTimeAndExecutedByNameAfter() {
        var prepared = PostgresPreparedStatements()
        #expect(prepared.use(for: "SELECT 1", parameterCount: 0) == .unnamed, "no parameters: never prepared")
        #expect(prepared.use(for: "SELECT 1", parameterCount: 0) == .unnamed)
        #expect(prepared.use(for: "SELECT $1", parameterCount: 1) == .unnamed, "seen once")
        guard case .prepare(let name) = prepared.use(for: "SELECT $1", parameterCount: 1) else {
            Issue.record("not prepared the second time")
            return
        }
        #expect(prepared.use(for: "SELECT $1", parameterCount: 1) == .execute(name), "by name in the same pipeline")
        prepared.prepared("SELECT $1", as: name, succeeded: true)
        #expect(prepared.use(for: "SELECT $1", parameterCount: 1) == .execute(name))
        prepared.failed("SELECT $1", sqlState: "0A000")
        #expect(prepared.use(for: "SELECT $1", parameterCount: 1) == .unnamed, "a changed result: seen anew")
        #expect(prepared.use(for: "SELECT $1", parameterCount: 1) != .execute(name), "never the old name again")
    }

    @Test func aPrepareThatFailedHoldsNoName() {
        var prepared = PostgresPreparedStatements()
        _ = prepared.use(for: "SELEC $1", parameterCount: 1)
        guard case .prepare(let name) = prepared.use(for: "SELEC $1", parameterCount: 1) else {
            Issue.record("not prepared the second time")
            return
        }
        prepared.prepared("SELEC $1", as: name, succeeded: false)
        #expect(prepared.names.isEmpty)
        #expect(prepared.use(for: "SELEC $1", parameterCount: 1) == .unnamed)
    }

    /// Generated statements, each run a random number of times: at most ``capacity`` names,
    /// none given twice, and a statement seen once is never prepared.
    @Test func namesAreUniqueAndBounded() {
        var prepared = PostgresPreparedStatements()
        var generator = SystemRandomNumberGenerator()
        var given: Set<String> = []
        var runs: [String: Int] = [:]
        for _ in 0..<5000 {
            let sql = "SELECT $1 + \(Int.random(in: 0..<300, using: &generator))"
            runs[sql, default: 0] += 1
            switch prepared.use(for: sql, parameterCount: 1) {
            case .prepare(let name):
                #expect(given.insert(name).inserted, "a name given twice")
                #expect(runs[sql, default: 0] >= 2)
                prepared.prepared(sql, as: name, succeeded: true)
            case .execute(let name):
                #expect(prepared.names[sql] == name)
            case .unnamed:
                break
            }
        }
        #expect(prepared.names.count == PostgresPreparedStatements.capacity)
    }

    /// Two connections never give the same name (a pooler may hand one's session to the other).
    @Test func namesAreUniqueToTheConnection() {
        var connections = [PostgresPreparedStatements(), PostgresPreparedStatements()]
        var names: [Set<String>] = [[], []]
        for i in 0..<20 {
            for index in connections.indices {
                for _ in 0..<2 {
                    if case .prepare(let name) = connections[index].use(for: "SELECT $1 + \(i)", parameterCount: 1) {
                        #expect(name.utf8.count <= 63, "within PostgreSQL's name length: \(name)")
                        names[index].insert(name)
                    }
                }
            }
        }
        #expect(names[0].count == 20 && names[1].count == 20)
        #expect(names[0].isDisjoint(with: names[1]))
    }

    @Test func aServerThatForgetsNamesStopsPreparing() {
        var prepared = PostgresPreparedStatements()
        _ = prepared.use(for: "SELECT $1", parameterCount: 1)
        if case .prepare(let name) = prepared.use(for: "SELECT $1", parameterCount: 1) { prepared.prepared("SELECT $1", as: name, succeeded: true) }
        prepared.failed("SELECT $1", sqlState: "26000")
        #expect(!prepared.isEnabled && prepared.names.isEmpty)
        for _ in 0..<3 { #expect(prepared.use(for: "SELECT $1", parameterCount: 1) == .unnamed) }
    }
}

@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresPreparedStatementTests {
    /// The statements this connection's session has prepared.
    private func preparedOnServer(_ db: PostgresConnection) throws -> [String] {
        try db.execute("SELECT statement FROM pg_prepared_statements ORDER BY name").compactMap { $0[0] ?? nil }
    }

    @Test func theSecondRunIsPreparedInTheSameRoundTripWithTheSameAnswers() throws {
        let db = try PostgresConnection(try TestPostgres.emptyDatabase())
        let sql = "SELECT $1::bigint * 2, $2::text IS NULL"
        let before = db.roundTrips
        for value in [Int64.min / 2, -1, 0, 7, Int64.max / 2] {
            #expect(try db.execute(sql, [String(value), nil]) == [[String(value * 2), "t"]])
        }
        #expect(db.roundTrips - before == 5, "one round trip each, the prepare's included")
        #expect(try preparedOnServer(db) == [sql])
        // In a pipeline: prepared there too, answers in order.
        let piped = "SELECT $1::text || '!'"
        for _ in 0..<3 {
            let answers = try db.pipeline([.init(sql: piped, parameters: ["a"]), .init(sql: piped, parameters: ["b"]), .init(sql: "SELECT 1")])
            #expect(answers == [[["a!"]], [["b!"]], [["1"]]])
        }
        #expect(try preparedOnServer(db).sorted() == [piped, sql].sorted())
    }

    @Test func aStatementThatFailsToPrepareFailsAsItWouldUnprepared() throws {
        let db = try PostgresConnection(try TestPostgres.emptyDatabase())
        for _ in 0..<3 {
            #expect(throws: PostgresError.self) { try db.execute("SELECT no_such_column + $1::int", ["1"]) }
            #expect(try db.execute("SELECT $1::int + 1", ["1"]) == [["2"]], "the connection goes on")
        }
        #expect(try preparedOnServer(db) == ["SELECT $1::int + 1"])
    }

    /// A pooler in transaction mode hands the next transaction another session, which knows no
    /// name: `DEALLOCATE ALL` does the same to this one. One statement fails (not permanently:
    /// the sync retries it), then the connection prepares nothing more and answers as before.
    @Test func aSessionThatForgotTheNamesFailsOnceThenRunsUnprepared() throws {
        let db = try PostgresConnection(try TestPostgres.emptyDatabase())
        let sql = "SELECT $1::int + 1"
        for _ in 0..<2 { _ = try db.execute(sql, ["1"]) }
        try db.execute("DEALLOCATE ALL")
        do {
            _ = try db.execute(sql, ["1"])
            Issue.record("the forgotten name ran")
        } catch let error as PostgresError {
            #expect(error.sqlState == "26000" && !error.isPermanent)
        }
        for _ in 0..<3 { #expect(try db.execute(sql, ["2"]) == [["3"]]) }
        #expect(try db.pipeline([.init(sql: sql, parameters: ["4"])]) == [[["5"]]])
        #expect(try preparedOnServer(db).isEmpty)
    }

    /// A prepared `SELECT *` whose table gained a column: PostgreSQL refuses the old plan once
    /// (0A000), transiently; the statement is prepared anew and answers with the new column.
    @Test func aPreparedSelectWhoseColumnsChangedIsPreparedAnew() throws {
        let url = try TestPostgres.emptyDatabase()
        let db = try PostgresConnection(url)
        try db.execute("CREATE TABLE t(a int)")
        try db.execute("INSERT INTO t VALUES (1)")
        let sql = "SELECT * FROM t WHERE a = $1::int"
        for _ in 0..<3 { #expect(try db.execute(sql, ["1"]) == [["1"]]) }
        try PostgresConnection(url).execute("ALTER TABLE t ADD COLUMN b text DEFAULT 'x'")
        do {
            _ = try db.execute(sql, ["1"])
        } catch let error as PostgresError {
            #expect(error.sqlState == "0A000" && !error.isPermanent)
        }
        for _ in 0..<3 { #expect(try db.execute(sql, ["1"]) == [["1", "x"]]) }
    }

    /// Through the backend: uploads and fetches of adversarial values, each kind of statement
    /// run many times (prepared from the second), read back exactly by another client.
    @Test func uploadsAndFetchesReadBackTheSameWhenPrepared() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let writer = try PostgresBackend(conninfo: url)
        let reader = try PostgresBackend(conninfo: url)
        let titles = ["", "2.0", "-0.0", "\u{1}\u{1F}", "{\"a\":1}", "null", "0.30000000000000004", String(repeating: "é", count: 300)]
        let scores: [Double?] = [nil, 2.0, -0.0, 0.1 + 0.2, 1.7976931348623157e308, .leastNonzeroMagnitude]
        var cursor = ""
        var expected: [String: [String: JSONValue]] = [:]
        for round in 0..<6 {
            let rows = (0..<5).map { i -> (String, [String: JSONValue]) in
                let title = titles[(round * 5 + i) % titles.count]
                let score = scores[(round + i) % scores.count]
                return ("r\(round)-\(i)", ["title": .string(title), "done": .integer(round % 2 == 0 ? Int64.max : Int64.min), "score": score.map(JSONValue.double) ?? .null])
            }
            let entries = rows.enumerated().map { index, row in
                CrudEntry(id: Int64(round * 5 + index + 1), transactionID: Int64(round + 1), op: .put, table: "notes", rowID: row.0, data: row.1)
            }
            try writer.upload([CrudTransaction(transactionID: Int64(round + 1), entries: entries)], clientID: "writer", epoch: 1)
            for (id, data) in rows { expected[id] = data }
            let batch = try reader.fetchChanges(after: cursor, limit: 1000)
            cursor = batch.nextCursor
            for change in batch.changes {
                let read = try change.data.map { try JSONValue(parsing: $0) }
                #expect(read == expected[change.rowID].map(JSONValue.object), "\(change.rowID): \(change.data ?? "nil")")
            }
        }
        #expect(try writer.withConnection { !$0.preparedStatements.names.isEmpty }, "the upload's statements were prepared")
        #expect(try reader.withConnection { !$0.preparedStatements.names.isEmpty }, "the fetch's statements were prepared")
    }

    /// The entry-at-a-time upload gives bare parameters to columns, whose types PostgreSQL
    /// infers from the table: those statements are never prepared, so a column whose type
    /// changed takes the next value as it would unprepared.
    @Test func anEntryAtATimeIsNeverPrepared() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let db = try PostgresConnection(url)
        let upload = PostgresUpload(db: db, columns: try PostgresSetup.columnRegistry(on: db).types)
        for i in 0..<4 {
            for (op, data) in [(CrudEntry.Operation.put, ["title": JSONValue.string("t")]), (.patch, ["done": .integer(1)]), (.delete, nil)] {
                try upload.apply(CrudEntry(id: 1, transactionID: 1, op: op, table: "notes", rowID: "r\(i)", data: data))
            }
        }
        let prepared = db.preparedStatements.names.keys
        #expect(!prepared.contains { $0.contains("INSERT INTO \"notes\"") || $0.contains("UPDATE \"notes\"") || $0.contains("DELETE FROM \"notes\"") }, "\(prepared)")
    }

    /// Every prepared statement of a full sync's pages, planned generically (as PostgreSQL may
    /// choose after five runs), starts its index scan at the page's first id: a page costs the
    /// same at the table's end as at its start.
    @Test func aFullSyncPagesGenericPlanStartsAtThePage() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let other = try PostgresConnection(url)
        try other.execute("INSERT INTO notes(id, title) SELECT 'n' || lpad(i::text, 5, '0'), 'x' FROM generate_series(1, 2000) i")
        let backend = try PostgresBackend(conninfo: url)
        var cursor = "", pages = 0, rows = 0
        while true {
            let batch = try backend.fetchChanges(after: cursor, limit: 100)
            cursor = batch.nextCursor
            pages += 1
            rows += batch.changes.count
            if !batch.hasMore || pages > 100 { break }
        }
        #expect(rows == 2000)
        let plans = try backend.withConnection { db -> [String: String] in
            try db.execute("SET plan_cache_mode = force_generic_plan")
            var plans: [String: String] = [:]
            for (sql, name) in db.preparedStatements.names where sql.contains("tandem_page") {
                let arguments = sql.contains("$2") ? "('n01000', 100)" : "(100)"
                plans[sql] = try db.execute("EXPLAIN EXECUTE \(name)\(arguments)").compactMap { $0[0] ?? nil }.joined(separator: "\n")
            }
            try db.execute("RESET plan_cache_mode")
            return plans
        }
        #expect(!plans.isEmpty, "the pages' statements were prepared")
        for (sql, plan) in plans where sql.contains("$2") {
            #expect(plan.contains("Index Cond: (id > $1)"), "\(sql)\n\(plan)")
        }
    }
}
