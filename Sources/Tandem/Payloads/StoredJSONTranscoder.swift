import Foundation

/// Writes a stored row's JSON (as the data table holds it) as an exported object, without the
/// view extracting each column, when that gives what the view would show.
///
/// The view reads each declared column from the row's JSON and casts it to the column's type.
/// A value already of the column's type (what every write path stores: see ``StoredValue``),
/// NULL, or a key the JSON lacks (a column added later) reads as it is; so those are written
/// straight from the stored text. Anything else (a value of another type, kept from before a
/// column's type was changed; a key twice; a key that is not plain ASCII; text that is not a
/// flat JSON object) is left to the view: ``write(id:data:dataIsNull:to:)`` returns false and
/// writes nothing.
struct StoredJSONTranscoder {
    let table: TableSchema
    private let names: [[UInt8]]
    private var element = FlatElement()
    /// Per column, the index of its member in `element`, or -1.
    private var found: [Int]

    init(table: TableSchema) {
        self.table = table
        names = table.columns.map { Array($0.name.utf8) }
        found = Array(repeating: -1, count: table.columns.count)
    }

    mutating func write(id: UnsafeBufferPointer<UInt8>, data: UnsafeBufferPointer<UInt8>?, dataIsNull: Bool, to writer: inout ExportWriter) -> Bool {
        for index in found.indices { found[index] = -1 }
        if let data {
            guard element.parse(data, 0..<data.count) else { return false }
            for (member, entry) in element.members.enumerated() {
                let key = UnsafeBufferPointer(rebasing: data[entry.key])
                guard let column = names.firstIndex(where: { $0.elementsEqual(key) }) else { continue }
                guard found[column] < 0, fits(entry.value, table.columns[column].type, data) else { return false }
                found[column] = member
            }
        } else if !dataIsNull {
            return false  // stored as another type than text
        }
        writer.beginRow()
        writer.key(0)
        writer.appendString(utf8: id)
        for column in found.indices {
            writer.key(column + 1)
            guard let data, found[column] >= 0 else { writer.appendNull(); continue }
            switch element.members[found[column]].value {
            case .null: writer.appendNull()
            case .integer(let i): writer.append(.integer(i))
            case .double(let d): writer.append(real: d)
            case .string(let range, let escaped, _):
                if escaped, let text = FlatElement.text(data, range, escaped: true, ascii: false) {
                    writer.append(.text(text))
                } else {
                    writer.appendString(utf8: UnsafeBufferPointer(rebasing: data[range]))
                }
            case .bool: preconditionFailure("fits(_:_:_:) refuses booleans")
            }
        }
        return true
    }

    /// True when the view reads `value` in a column of `type` as the value itself.
    private func fits(_ value: FlatElement.Value, _ type: ColumnSchema.ColumnType, _ data: UnsafeBufferPointer<UInt8>) -> Bool {
        switch (value, type) {
        case (.null, _), (.integer, .integer), (.double, .real): return true
        case (.string(let range, let escaped, _), .text):
            return !escaped || FlatElement.text(data, range, escaped: true, ascii: false) != nil
        default: return false
        }
    }
}
