import CSQLite

/// Reading and binding text without a ``DatabaseValue`` in between, for loops that step one
/// statement many times (imports, exports).
extension Statement {
    /// Resets the statement (its bindings stay) so that it runs again from the start.
    func reset() { sqlite3_reset(handle) }

    /// Binds `text` to parameter `index` (1-based); SQLite copies it.
    func bind(text: String, at index: Int32) throws {
        var text = text
        let rc = text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, tandem_sqlite_transient()) }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, index, $0, Int32(bytes.count), tandem_sqlite_transient())
            }
        }
        if rc != SQLITE_OK { throw connection.error(rc, sql: sql) }
    }

    /// True when the column of the current row is NULL.
    func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// The bytes of a text column of the current row (any NUL included), valid until the next
    /// step or reset; nil for NULL and for values that are not text.
    func textBytes(at column: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard sqlite3_column_type(handle, column) == SQLITE_TEXT, let text = sqlite3_column_text(handle, column) else { return nil }
        return UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column)))
    }
}
