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
    private let columns: [String: (index: Int, column: ColumnSchema)]

    init(table: TableSchema, options: ImportOptions) {
        self.table = table
        self.options = options
        columns = Dictionary(table.columns.enumerated().map { ($1.name, ($0, $1)) }, uniquingKeysWith: { first, _ in first })
    }

    /// One element's keys, sorted, by where they go.
    struct Element {
        var id: (key: String, value: JSONValue)?
        /// Each key for a column, with the column's index in the table.
        var columns: [(key: String, value: JSONValue, index: Int)] = []
        var nested: [(key: String, value: JSONValue)] = []
    }

    /// Where one key goes, whatever element it is in.
    enum Place: Hashable {
        case id
        /// The column at this index of the table's columns.
        case column(Int)
        case nested
        /// No column takes it; it is left alone.
        case ignored
        /// Mapped to a column this table lacks, or unknown with ``ImportOptions/strict``.
        case refused
    }

    func place(of key: String) -> Place {
        if options.nested[key] != nil { return .nested }
        if let mapped = options.keyMap[key] {
            if mapped == "id" { return .id }
            return columns[mapped].map { .column($0.index) } ?? .refused
        }
        if key == "id" { return .id }
        if let found = columns[key] ?? columns[KeyConvention.snake(key)] ?? columns[KeyConvention.camel(key)] { return .column(found.index) }
        return options.strict ? .refused : .ignored
    }

    /// - Throws: ``TandemError/invalidPayload(_:)`` naming the element (`at`) and the key: two keys
    ///   for one column or the id, a mapped key whose column this table lacks, an unknown key
    ///   with ``ImportOptions/strict``.
    func resolve(_ object: [String: JSONValue], at: String) throws -> Element {
        var element = Element()
        var claimed: [String: String] = [:]  // column name, or "id" → the key that went there
        for key in object.keys.sorted() {
            let value = object[key]!
            let name: String
            let place = place(of: key)
            switch place {
            case .nested:
                element.nested.append((key, value))
                continue
            case .ignored:
                continue
            case .refused:
                if let mapped = options.keyMap[key] {
                    throw TandemError.invalidPayload("element \(at), key '\(key)': it is mapped to \(mapped), which is not a column of \(table.name)")
                }
                throw TandemError.invalidPayload("element \(at), key '\(key)': no column of \(table.name) matches it")
            case .id:
                name = "id"
            case .column(let index):
                name = table.columns[index].name
            }
            if let other = claimed[name] {
                throw TandemError.invalidPayload(
                    "element \(at): the keys '\(other)' and '\(key)' both go to \(name == "id" ? "the id" : "column \(name)"); keep one, or map one of them to another column")
            }
            claimed[name] = key
            if case .column(let index) = place { element.columns.append((key, value, index)) } else { element.id = (key, value) }
        }
        return element
    }
}
