import CSQLite
import Foundation
import Synchronization

/// Swift's `==` and `<` of any Swift type as an SQL function, for the queries of the typed API:
/// `tandem_value_compare(a, b, type, op)` decodes both values as the Swift type registered
/// under `type` (a number from ``token(for:make:)``) and compares them with Swift's operators
/// (`op` 0 to 3: `<`, `<=`, `>`, `>=`; 4: `==`). A value that does not decode compares false,
/// as does NULL unless the type is optional. A value bound as an argument is decoded once per
/// statement (SQLite keeps it with the argument).
///
/// Registered `SQLITE_DIRECTONLY`, as ``SwiftStringFunctions`` are.
enum SwiftValueFunctions {
    static let compare = "tandem_value_compare"
    /// The operator code of `==`; comparisons use ``SwiftStringFunctions/code(_:)``'s.
    static let equalCode: Int64 = 4

    /// How one Swift type decodes from a column value and compares.
    struct ValueType: Sendable {
        /// The value, nil when it does not decode.
        let decode: @Sendable (DatabaseValue) -> Any?
        /// Compares two decoded values with an operator code.
        let compare: @Sendable (Any, Any, Int32) -> Bool
    }

    private static let registry = Mutex<(types: [ValueType], tokens: [ObjectIdentifier: Int64])>(([], [:]))

    /// The number `type` is registered under, registering it with `make` the first time.
    static func token(for type: Any.Type, make: () -> ValueType) -> Int64 {
        registry.withLock { registry in
            if let token = registry.tokens[ObjectIdentifier(type)] { return token }
            registry.types.append(make())
            let token = Int64(registry.types.count - 1)
            registry.tokens[ObjectIdentifier(type)] = token
            return token
        }
    }

    private static func valueType(_ token: Int64) -> ValueType? {
        registry.withLock { $0.types.indices.contains(Int(token)) ? $0.types[Int(token)] : nil }
    }

    /// A decoded value kept with a constant argument.
    private final class Decoded {
        let value: Any?
        init(_ value: Any?) { self.value = value }
    }

    static func register(on db: OpaquePointer) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY
        sqlite3_create_function_v2(db, compare, 4, flags, nil, { context, _, arguments in
            guard let type = SwiftValueFunctions.valueType(sqlite3_value_int64(arguments![2])) else {
                sqlite3_result_error(context, "\(SwiftValueFunctions.compare): unknown type", -1)
                return
            }
            let decoded = [Int32(0), 1].map { index -> Any? in
                if let kept = sqlite3_get_auxdata(context, index) { return Unmanaged<Decoded>.fromOpaque(kept).takeUnretainedValue().value }
                let value = type.decode(DatabaseValue(arguments![Int(index)]))
                // SQLite keeps it only for an argument that is the same for every row.
                sqlite3_set_auxdata(context, index, Unmanaged.passRetained(Decoded(value)).toOpaque()) { Unmanaged<Decoded>.fromOpaque($0!).release() }
                return value
            }
            guard let a = decoded[0], let b = decoded[1] else { return sqlite3_result_int(context, 0) }
            sqlite3_result_int(context, type.compare(a, b, sqlite3_value_int(arguments![3])) ? 1 : 0)
        }, nil, nil, nil)
    }
}

extension DatabaseValue {
    /// The value an SQL function was given.
    init(_ value: OpaquePointer?) {
        switch sqlite3_value_type(value) {
        case SQLITE_NULL: self = .null
        case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            let text = sqlite3_value_text(value)
            self = .text(String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), as: UTF8.self))
        default:
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let bytes = sqlite3_value_blob(value) else { self = .blob(Data()); return }
            self = .blob(Data(bytes: bytes, count: count))
        }
    }
}
