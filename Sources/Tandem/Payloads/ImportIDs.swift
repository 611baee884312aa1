import CSQLite
import Foundation

/// The ids of an import's elements, for the two questions that need all of them: did an id come
/// twice, and which stored rows did the payload leave out (``ImportOptions/deleteMissing``).
///
/// They are kept in a private temporary SQLite database of their own (a file SQLite deletes on
/// close, with a 16 MiB page cache), not in memory and not in the database being imported into:
/// memory stays bounded whatever the payload's size, and an import that changes no row writes
/// nothing to the database. Ids are appended as they come; at the end one index over them (built
/// by SQLite's external sort) answers both questions in order of id. Ids that came in increasing
/// order (an export imported again) need no index: none can repeat, and they are in order already.
final class ImportIDs {
    private let connection: Connection
    private var pending: [DatabaseValue] = []
    private static let batch = 128
    private var indexed = false
    /// True while every id came after the one before, in SQLite's order of text.
    private var inOrder = true
    private var last: [UInt8] = []

    init() throws {
        connection = try Connection(path: "", readOnly: false, busyTimeoutMilliseconds: 0, rules: nil)
        try connection.executeScript(
            """
            PRAGMA cache_size = -16384; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
            CREATE TABLE ids(id TEXT NOT NULL, position INTEGER NOT NULL);
            CREATE TABLE missing(id TEXT NOT NULL);
            BEGIN;
            """)
    }

    /// Records the id of the element at `position`.
    func add(_ id: String, position: Int) throws {
        if inOrder {
            var id = id
            inOrder = id.withUTF8 { utf8 in
                let after = position == 0 || last.withUnsafeBufferPointer { Self.compare($0, utf8) < 0 }
                last.replaceSubrange(last.indices, with: utf8)
                return after
            }
        }
        pending.append(.text(id))
        pending.append(.integer(Int64(position)))
        if pending.count == 2 * Self.batch { try flush() }
    }

    private func flush() throws {
        guard !pending.isEmpty else { return }
        let rows = pending.count / 2
        let sql = rows == Self.batch ? Self.batchInsert : "INSERT INTO ids(id, position) VALUES " + Array(repeating: "(?, ?)", count: rows).joined(separator: ", ")
        try connection.withCachedStatement(sql) { try $0.run(pending) }
        pending.removeAll(keepingCapacity: true)
    }

    private static let batchInsert = "INSERT INTO ids(id, position) VALUES " + Array(repeating: "(?, ?)", count: batch).joined(separator: ", ")

    private func index() throws {
        try flush()
        guard !indexed, !inOrder else { return }
        try connection.execute("CREATE INDEX ids_in_order ON ids(id, position)")
        indexed = true
    }

    /// The first element (by position) whose id an earlier element had, or nil.
    func firstRepeat() throws -> (id: String, position: Int)? {
        try index()
        if inOrder { return nil }
        // One pass in id order finds whether any id repeats; only then the first repeat by position.
        var repeats = false
        try connection.withCachedStatement("SELECT id FROM ids ORDER BY id") { statement in
            statement.reset()
            defer { statement.reset() }
            var previous: [UInt8]?
            while try statement.step() {
                guard let id = statement.textBytes(at: 0) else { continue }
                if let previous, previous.elementsEqual(id) { repeats = true; return }
                previous = Array(id)
            }
        }
        guard repeats else { return nil }
        let row = try connection.fetchAll(
            """
            SELECT later.id, later.position FROM ids AS first JOIN ids AS later ON later.id = first.id AND later.position > first.position
            ORDER BY later.position LIMIT 1
            """
        ).first
        guard let row, let id = row[0].stringValue, let position = row[1].int64Value else { return nil }
        return (id, Int(position))
    }

    /// Walks `stored` (a statement of the database being imported into, giving ids in order,
    /// as SQLite's `ORDER BY id` sorts them) beside the payload's ids in the same order, and
    /// keeps the stored ids the payload does not have; returns how many.
    func collectMissing(from stored: Statement) throws -> Int {
        try index()
        var count = 0
        var batch: [DatabaseValue] = []
        func flushMissing() throws {
            guard !batch.isEmpty else { return }
            try connection.execute("INSERT INTO missing(id) VALUES " + Array(repeating: "(?)", count: batch.count).joined(separator: ", "), batch)
            batch.removeAll(keepingCapacity: true)
        }
        try connection.withCachedStatement(inOrder ? "SELECT id FROM ids ORDER BY rowid" : "SELECT id FROM ids ORDER BY id") { payload in
            payload.reset()
            defer { payload.reset() }
            var payloadID = try payload.step() ? payload.textBytes(at: 0) : nil
            stored.reset()
            defer { stored.reset() }
            while try stored.step() {
                guard let id = stored.textBytes(at: 0) else { continue }
                // Payload ids below this stored one are new rows: pass them.
                while let current = payloadID, Self.compare(current, id) < 0 {
                    payloadID = try payload.step() ? payload.textBytes(at: 0) : nil
                }
                if let current = payloadID, Self.compare(current, id) == 0 { continue }
                batch.append(.text(String(decoding: id, as: UTF8.self)))
                count += 1
                if batch.count == 500 { try flushMissing() }
            }
        }
        try flushMissing()
        return count
    }

    /// Each id ``collectMissing(from:)`` kept, in order of id.
    func forEachMissing(_ body: (String) throws -> Void) throws {
        try connection.withCachedStatement("SELECT id FROM missing ORDER BY rowid") { statement in
            statement.reset()
            defer { statement.reset() }
            while try statement.step() {
                if case .text(let id) = statement.value(at: 0) { try body(id) }
            }
        }
    }

    /// SQLite's BINARY collation: bytes compared as unsigned, then length.
    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int32 {
        let common = min(a.count, b.count)
        if common > 0 {
            let order = memcmp(a.baseAddress!, b.baseAddress!, common)
            if order != 0 { return order }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }
}
