/// A connection's prepared statements by SQL text, bounded: past ``capacity`` the least
/// recently used is finalized. A statement that failed is removed by the connection, so the
/// next use prepares it afresh (after a schema change, say).
struct StatementCache {
    /// Most statements kept. User SQL built with values spliced in would otherwise grow the cache for ever.
    let capacity: Int
    /// A class, so that marking a use costs no second hash of the SQL.
    private final class Entry {
        let statement: Statement
        var lastUse: UInt64
        init(_ statement: Statement, _ lastUse: UInt64) { self.statement = statement; self.lastUse = lastUse }
    }

    private var entries: [String: Entry] = [:]
    private var clock: UInt64 = 0

    init(capacity: Int = 256) { self.capacity = max(1, capacity) }

    var count: Int { entries.count }

    mutating func statement(for sql: String) -> Statement? {
        guard let entry = entries[sql] else { return nil }
        clock += 1
        entry.lastUse = clock
        return entry.statement
    }

    mutating func insert(_ statement: Statement, for sql: String) {
        clock += 1
        entries[sql] = Entry(statement, clock)
        if entries.count > capacity, let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            entries.removeValue(forKey: oldest)
        }
    }

    func contains(_ sql: String) -> Bool { entries[sql] != nil }

    mutating func remove(_ sql: String) { entries.removeValue(forKey: sql) }

    mutating func removeAll() { entries.removeAll() }
}
