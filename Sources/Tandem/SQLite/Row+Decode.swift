import Foundation

/// A row's values read as Swift types by the rule they bind by (``DatabaseValueDecodable``).
extension Row {
    /// The value at column `index` (0-based) read as `T`, by the rule `T` binds by
    /// (``DatabaseValueDecodable``): `try row.decode(Date.self, at: 2)`.
    /// - Throws: ``TandemError/invalidRecord(_:)`` naming the column, what `T` reads and what
    ///   the column holds (NULL included: read an optional with ``decodeIfPresent(_:at:)``).
    public func decode<T: DatabaseValueDecodable>(_ type: T.Type = T.self, at index: Int) throws -> T {
        let value = self[index]
        guard let decoded = T.decode(from: value) else {
            throw TandemError.invalidRecord("column \(columns[index]) holds \(value.shownWithKind), not \(T.storedForm) (\(T.self))")
        }
        return decoded
    }

    /// ``decode(_:at:)`` of the first column named `column`.
    /// - Throws: ``TandemError/invalidRecord(_:)`` as ``decode(_:at:)``, or naming a column the row lacks.
    public func decode<T: DatabaseValueDecodable>(_ type: T.Type = T.self, named column: String) throws -> T {
        guard let index = columns.firstIndex(of: column) else { throw TandemError.invalidRecord("the row has no column \(column)") }
        return try decode(type, at: index)
    }

    /// ``decode(_:at:)``, or nil for NULL.
    /// - Throws: as ``decode(_:at:)`` for a value that is not NULL.
    public func decodeIfPresent<T: DatabaseValueDecodable>(_ type: T.Type = T.self, at index: Int) throws -> T? {
        self[index].isNull ? nil : try decode(type, at: index)
    }
}
