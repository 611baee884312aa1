import Foundation

/// A schema read from JSON is checked as opening a database checks it (``Schema/validate()``).
extension Schema {
    /// Decodes and validates a schema from JSON.
    /// - Throws: ``TandemError/invalidSchema(_:)`` naming the table and column at fault, or a key
    ///   given twice in one object.
    public init(json: Data) throws {
        if (try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])) != nil,
            let duplicate = JSONDuplicateKey.first(in: String(decoding: json, as: UTF8.self))
        {
            throw TandemError.invalidSchema(SchemaProblem(.malformed, duplicate.description))
        }
        do {
            self = try JSONDecoder().decode(Schema.self, from: json)
        } catch let error as DecodingError {
            throw TandemError.invalidSchema(SchemaProblem(.malformed, Schema.describe(error)))
        }
        try validate()
    }

    /// Reads a schema JSON file.
    /// - Throws: ``TandemError/invalidSchema(_:)`` naming the file.
    public init(contentsOf url: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw TandemError.invalidSchema(SchemaProblem(.malformed, "cannot read schema file '\(url.path)': it does not exist"))
        }
        guard !isDirectory.boolValue else {
            throw TandemError.invalidSchema(SchemaProblem(.malformed, "cannot read schema file '\(url.path)': it is a directory"))
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw TandemError.invalidSchema(SchemaProblem(.malformed, "cannot read schema file '\(url.path)': permission denied or not readable"))
        }
        do { try self.init(json: data) } catch TandemError.invalidSchema(let problem) {
            throw TandemError.invalidSchema(problem.within(url.path))
        }
    }

    fileprivate static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let p = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return p.isEmpty ? "the top level" : String(p.drop { $0 == "." })
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing key '\(key.stringValue)' at \(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(context.debugDescription) at \(path(context))"
        case .dataCorrupted(let context):
            if let underlying = context.underlyingError as NSError? {
                return "not valid JSON (\(underlying.userInfo[NSDebugDescriptionErrorKey] ?? underlying.localizedDescription))"
            }
            return "\(context.debugDescription) at \(path(context))"
        @unknown default: return "\(error)"
        }
    }
}

extension TableSchema {
    /// `ps_data__<name>`, or `ps_data_local__<name>` for a local-only table.
    public var dataTableName: String { InternalTables.dataTable(of: name, localOnly: localOnly) }
}
