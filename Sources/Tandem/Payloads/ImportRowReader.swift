import Foundation

/// One element as what it writes: its id, the values of the columns it gives (as the columns
/// store them), and, for nested keys, the children of each nested table.
struct ImportRow {
    var id: String
    /// One per column of the table, in the table's order; nil for a column the element leaves out.
    var values: [DatabaseValue?]
    var children: [ImportPlan] = []
}

/// Turns the elements of a payload into ``ImportRow``s for one table.
///
/// The general way reads a ``JSONValue`` and refuses what does not fit with a message naming the
/// element and key. The fast way reads a ``FlatElement`` in place, for the usual payload whose
/// elements repeat the same keys: where each key goes is worked out once per set of keys, and
/// each value is made what its column stores by the same rule. It gives up (nil) on anything
/// the general way must judge, which then reads that element.
struct ImportRowReader {
    let table: TableSchema
    let schema: Schema
    let options: ImportOptions
    let keys: ImportKeys
    /// For a nested list: the child table's column that takes the parent's id, and that id.
    let parent: (column: String, index: Int, id: String)?
    /// Per nested key: the child table's column for the parent's id.
    let references: [String: String]
    let connection: Connection
    private var layouts: [KeyLayout] = []
    private var lastLayout = 0

    init(table: TableSchema, schema: Schema, options: ImportOptions, parent: (column: String, id: String)?, on connection: Connection) throws {
        self.table = table
        self.schema = schema
        self.options = options
        self.connection = connection
        keys = ImportKeys(table: table, options: options)
        self.parent = try parent.map { parent in
            guard let index = table.columns.firstIndex(where: { $0.name == parent.column }) else {
                throw TandemError.invalidSchema(
                    SchemaProblem(
                        .unknownColumn, table: table.name, column: parent.column, "nested table '\(table.name)' has no column \(parent.column) for its parent's id"))
            }
            return (parent.column, index, parent.id)
        }
        references = try options.nested.mapValues { try ImportPlan.referenceColumn(child: $0, parent: table.name, schema: schema) }
    }

    // MARK: The general way

    /// The element `bytes` (one JSON object), read whole.
    /// - Parameters:
    ///   - at: how messages name the element (`[3]`, or `[3] (line 4)`).
    ///   - path: its place in the payload, for keys found twice and for nested elements (`[3]`).
    func row(parsing bytes: UnsafeBufferPointer<UInt8>, at: String, path: String) throws -> ImportRow {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw TandemError.invalidJSON("the payload is not UTF-8: element \(at) holds bytes that are not")
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: text, refusingDuplicateKeys: true, keyPath: path, exactNumbers: true)
        } catch TandemError.invalidJSON(let message) where message.hasPrefix("not valid JSON") {
            throw TandemError.invalidJSON("element \(at) is not valid JSON: \(text.prefix(200))")
        } catch let inexact as JSONInexactNumber {
            throw TandemError.invalidPayload("element \(at), key '\(inexact.keyPath)': \(inexact.reason)")
        }
        return try row(from: value, at: at, path: path)
    }

    /// The element `element`.
    /// - Throws: ``TandemError/invalidPayload(_:)`` naming the element (`at`) and the key.
    func row(from element: JSONValue, at: String, path: String) throws -> ImportRow {
        guard case .object(let object) = element else { throw TandemError.invalidPayload("element \(at) is not an object") }
        let resolved = try keys.resolve(object, at: at)
        let id: String
        switch resolved.id {
        case (_, .string(let text))? where !text.isEmpty: id = text
        case (_, .integer(let number))?: id = String(number)
        default:
            let key = resolved.id?.key ?? "id"
            throw TandemError.invalidPayload("element \(at) has no id (a non-empty text or an integer under the key '\(key)')")
        }
        var values = [DatabaseValue?](repeating: nil, count: table.columns.count)
        for (key, value, index) in resolved.columns {
            values[index] = try ImportPlan.databaseValue(value, for: table.columns[index], of: table, at: "element \(at), key '\(key)'", on: connection)
        }
        if let parent {
            if let given = resolved.columns.first(where: { $0.index == parent.index }), values[parent.index] != .text(parent.id) {
                throw TandemError.invalidPayload(
                    "element \(at), key '\(given.key)': \(given.value.jsonText.prefix(60)) is not the id of the element it is nested in ('\(parent.id)'), which \(parent.column) takes"
                )
            }
            values[parent.index] = .text(parent.id)
        }
        var row = ImportRow(id: id, values: values)
        let childOptions = ImportOptions(keyMap: options.keyMap, strict: options.strict)
        for (key, value) in resolved.nested {
            guard case .array(let childElements) = value, let childTable = options.nested[key], let reference = references[key] else {
                throw TandemError.invalidPayload("element \(at), key '\(key)': a nested list must be an array of objects")
            }
            row.children.append(
                try ImportPlan(
                    elements: childElements, table: childTable, parent: (reference, id),
                    schema: schema, options: childOptions, path: "\(path).\(key)", on: connection))
        }
        return row
    }

    // MARK: The fast way

    /// The keys of one shape of element, and where each goes.
    private struct KeyLayout {
        var keys: [[UInt8]]
        var places: [ImportKeys.Place]
    }

    /// The element `flat`, read from `bytes`; nil when the general way must read it.
    mutating func row(from flat: FlatElement, in bytes: UnsafeBufferPointer<UInt8>) -> ImportRow? {
        guard parent == nil, let places = places(for: flat, in: bytes) else { return nil }
        var id: String?
        var values = [DatabaseValue?](repeating: nil, count: table.columns.count)
        for (member, place) in zip(flat.members, places) {
            switch place {
            case .ignored:
                continue
            case .id:
                switch member.value {
                case .string(let range, let escaped, let ascii):
                    guard let text = FlatElement.text(bytes, range, escaped: escaped, ascii: ascii), !text.isEmpty else { return nil }
                    id = text
                case .integer(let number):
                    id = String(number)
                default:
                    return nil
                }
            case .column(let index):
                let json: JSONValue
                switch member.value {
                case .null: json = .null
                case .bool(let b): json = .bool(b)
                case .integer(let i): json = .integer(i)
                case .double(let d): json = .double(d)
                case .string(let range, let escaped, let ascii):
                    guard let text = FlatElement.text(bytes, range, escaped: escaped, ascii: ascii) else { return nil }
                    json = .string(text)
                }
                guard let value = try? ImportPlan.databaseValue(json, for: table.columns[index], of: table, at: "", on: connection) else { return nil }
                values[index] = value
            case .nested, .refused:
                return nil
            }
        }
        guard let id else { return nil }
        return ImportRow(id: id, values: values)
    }

    /// Where each key of `flat` goes, from the layouts seen before; a new set of keys is worked
    /// out once. Nil for keys the general way must judge: a key twice, two keys for one place,
    /// a nested or refused key.
    private mutating func places(for flat: FlatElement, in bytes: UnsafeBufferPointer<UInt8>) -> [ImportKeys.Place]? {
        if !layouts.isEmpty, matches(layouts[lastLayout], flat, bytes) { return layouts[lastLayout].places }
        for index in layouts.indices where index != lastLayout && matches(layouts[index], flat, bytes) {
            lastLayout = index
            return layouts[index].places
        }
        let keys = flat.members.map { Array(bytes[$0.key]) }
        guard Set(keys).count == keys.count else { return nil }
        let places = keys.map { self.keys.place(of: String(decoding: $0, as: UTF8.self)) }
        var claimed = Set<ImportKeys.Place>()
        for place in places {
            switch place {
            case .nested, .refused: return nil
            case .ignored: continue
            case .id, .column: guard claimed.insert(place).inserted else { return nil }
            }
        }
        if layouts.count == 8 { layouts.removeFirst() }
        layouts.append(KeyLayout(keys: keys, places: places))
        lastLayout = layouts.count - 1
        return places
    }

    private func matches(_ layout: KeyLayout, _ flat: FlatElement, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard layout.keys.count == flat.members.count else { return false }
        for (key, member) in zip(layout.keys, flat.members) {
            guard key.count == member.key.count else { return false }
            if key.isEmpty { continue }
            let same = key.withUnsafeBufferPointer { memcmp($0.baseAddress!, bytes.baseAddress! + member.key.lowerBound, key.count) == 0 }
            if !same { return false }
        }
        return true
    }
}
