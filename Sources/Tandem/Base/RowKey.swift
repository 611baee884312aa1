/// A row by its table and id, equal to another only when both are the same bytes, as SQLite
/// compares them: Swift's `String` equality is canonical equivalence (`"é"` precomposed equals
/// `"e"` and a combining accent), under which two rows SQLite keeps apart would be one.
package struct RowKey: Hashable, Sendable {
    package let table: String
    package let id: String

    package init(table: String, id: String) {
        self.table = table
        self.id = id
    }

    package static func == (a: RowKey, b: RowKey) -> Bool {
        a.table.utf8.elementsEqual(b.table.utf8) && a.id.utf8.elementsEqual(b.id.utf8)
    }

    package func hash(into hasher: inout Hasher) {
        for byte in table.utf8 { hasher.combine(byte) }
        hasher.combine(0xFF as UInt8)  // never a byte of UTF-8: the table's end
        for byte in id.utf8 { hasher.combine(byte) }
    }
}
