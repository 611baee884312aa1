/// Where each key of an imported element goes: the id, a column, a nested list, or nowhere.
///
/// A key goes where ``ImportOptions/keyMap`` sends it (the id included: `--map key=id`), else
/// `id` to the id, else to the column of its name, else to the column its convention names
/// (`createdAt` → `created_at`, `created_at` → `createdAt`). Two keys of one element that go to
/// the same place (`created_at` and `createdAt`, or `id` and a key mapped to the id) are refused:
/// keeping either would drop the other without a word.
struct ImportKeys {
    let table: TableSchema
    let options: ImportOptions
    private let columns: [String: ColumnSchema]

    init(table: TableSchema, options: ImportOptions) {
        self.table = table
        self.options = options
        columns = Dictionary(table.columns.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// One element's keys, sorted, by where they go.
    struct Element {
        var id: (key: String, value: JSONValue)?
        var columns: [(key: String, value: JSONValue, column: ColumnSchema)] = []
        var nested: [(key: String, value: JSONValue)] = []
    }

    /// - Throws: ``TandemError/invalidJSON(_:)`` naming the element (`at`) and the key: two keys
    ///   for one column or the id, a mapped key whose column this table lacks, an unknown key
    ///   with ``ImportOptions/strict``.
    func resolve(_ object: [String: JSONValue], at: String) throws -> Element {
        var element = Element()
        var claimed: [String: String] = [:]  // column name, or "id" → the key that went there
        for key in object.keys.sorted() {
            let value = object[key]!
            if options.nested[key] != nil {
                element.nested.append((key, value))
                continue
            }
            let place: String
            if let mapped = options.keyMap[key] {
                guard mapped == "id" || columns[mapped] != nil else {
                    throw TandemError.invalidJSON("element \(at), key '\(key)': it is mapped to \(mapped), which is not a column of \(table.name)")
                }
                place = mapped
            } else if key == "id" {
                place = "id"
            } else if let column = columns[key] ?? columns[KeyConvention.snake(key)] ?? columns[KeyConvention.camel(key)] {
                place = column.name
            } else {
                if options.strict { throw TandemError.invalidJSON("element \(at), key '\(key)': no column of \(table.name) matches it") }
                continue
            }
            if let other = claimed[place] {
                throw TandemError.invalidJSON("element \(at): the keys '\(other)' and '\(key)' both go to \(place == "id" ? "the id" : "column \(place)"); keep one, or map one of them to another column")
            }
            claimed[place] = key
            if place == "id" { element.id = (key, value) } else { element.columns.append((key, value, columns[place]!)) }
        }
        return element
    }
}
