/// Strict decoding: a key the schema format does not know is an error, so that a typo such as
/// `"localonly"` is never silently ignored.
struct SchemaKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Decoder {
    /// - Throws: ``TandemError/invalidSchema(_:)`` naming `what` and the first unknown key.
    func rejectUnknownKeys(_ known: [String], in what: String, table: String? = nil, column: String? = nil) throws {
        let container = try self.container(keyedBy: SchemaKey.self)
        for key in container.allKeys where !known.contains(key.stringValue) {
            throw TandemError.invalidSchema(
                SchemaProblem(.unknownKey, table: table, column: column, "\(what): unknown key '\(key.stringValue)' (known keys: \(known.joined(separator: ", ")))"))
        }
    }
}
