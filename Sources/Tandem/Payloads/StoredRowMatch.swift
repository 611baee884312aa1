import Foundation

/// Whether a stored row already holds an import row's values, read from the row's stored JSON
/// without asking the view.
///
/// The view reads a column's JSON value as the value itself when it is of the column's type
/// (what every write path stores) or null, and a key the JSON lacks as NULL; a value of another
/// type it casts. So for each column the import row gives, a stored value of the column's type
/// is compared with it exactly (integers equal, reals bit for bit so that `-0.0` differs from
/// `0.0`, text byte for byte). Only a match of every column says "unchanged"; anything else (a
/// difference, a value the view would cast, stored JSON that is not a flat object) sends the row
/// to the view, which compares it column by column and writes what differs.
struct StoredRowMatch {
    let table: TableSchema
    private let names: [[UInt8]]
    private var element = FlatElement()
    /// Per column, whether the stored JSON gave it (for a key twice).
    private var seen: [Bool]

    init(table: TableSchema) {
        self.table = table
        names = table.columns.map { Array($0.name.utf8) }
        seen = Array(repeating: false, count: table.columns.count)
    }

    /// True when `data` (a stored row's JSON) holds every value `values` gives.
    mutating func holds(_ values: [DatabaseValue?], in data: UnsafeBufferPointer<UInt8>) -> Bool {
        guard element.parse(data, 0..<data.count) else { return false }
        for index in seen.indices { seen[index] = false }
        for member in element.members {
            let key = UnsafeBufferPointer(rebasing: data[member.key])
            guard let column = names.firstIndex(where: { $0.elementsEqual(key) }) else { continue }
            guard !seen[column] else { return false }
            seen[column] = true
            guard let value = values[column] else { continue }
            switch (value, member.value) {
            case (.null, .null): continue
            case (.integer(let a), .integer(let b)) where table.columns[column].type == .integer:
                guard a == b else { return false }
            case (.real(let a), .double(let b)) where table.columns[column].type == .real:
                guard a.bitPattern == b.bitPattern else { return false }
            case (.text(var text), .string(let range, let escaped, _)) where table.columns[column].type == .text:
                if escaped {
                    guard let stored = FlatElement.text(data, range, escaped: true, ascii: false), stored.utf8.elementsEqual(text.utf8) else { return false }
                } else {
                    let same = text.withUTF8 { utf8 in
                        utf8.count == range.count && (utf8.isEmpty || memcmp(utf8.baseAddress!, data.baseAddress! + range.lowerBound, range.count) == 0)
                    }
                    guard same else { return false }
                }
            default:
                return false
            }
        }
        // A column the element gives that the stored JSON lacks reads as NULL.
        for (column, value) in values.enumerated() where !seen[column] {
            if let value, value != .null { return false }
        }
        return true
    }
}
