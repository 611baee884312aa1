/// Text as a key, equal to another only when both are the same bytes and ordered by them, as
/// SQLite compares text: Swift's `String` equality is canonical equivalence (`"é"` precomposed
/// equals `"e"` and a combining accent), under which two ids SQLite keeps apart would be one.
package struct ExactText: Hashable, Comparable, Sendable {
    package let text: String

    package init(_ text: String) { self.text = text }

    package static func == (a: ExactText, b: ExactText) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }

    package static func < (a: ExactText, b: ExactText) -> Bool { a.text.utf8.lexicographicallyPrecedes(b.text.utf8) }

    package func hash(into hasher: inout Hasher) {
        for byte in text.utf8 { hasher.combine(byte) }
        hasher.combine(0xFF as UInt8)  // never a byte of UTF-8: the text's end
    }
}

/// A row by its table and id, both compared by their bytes (``ExactText``).
package struct RowKey: Hashable, Sendable {
    private let exactTable: ExactText
    private let exactID: ExactText
    package var table: String { exactTable.text }
    package var id: String { exactID.text }

    package init(table: String, id: String) {
        exactTable = ExactText(table)
        exactID = ExactText(id)
    }
}
