import CSQLite
import Foundation
import Synchronization

/// Swift's `==` and `<` of any Swift type as an SQL function, for the queries of the typed API:
/// `tandem_value_compare(a, b, type, op)` decodes both values as the Swift type registered
/// under `type` (a number from ``token(for:make:)``) and compares them with Swift's operators
/// (`op` 0 to 3: `<`, `<=`, `>`, `>=`; 4: `==`). A value that does not decode compares false,
/// as does NULL unless the type is optional. A bound argument (the constant, the type) is
/// decoded or looked up once per statement (SQLite keeps it with the argument).
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

    /// What is kept with a bound argument for the statement: its decoded value, or the type.
    private final class Kept {
        let value: Any?
        init(_ value: Any?) { self.value = value }
    }

    /// `make()` for argument `index`; for a bound argument, made once per statement and kept.
    private static func kept(
        _ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>, _ index: Int32,
        _ make: () -> Any?
    ) -> Any? {
        if let kept = sqlite3_get_auxdata(context, index) { return Unmanaged<Kept>.fromOpaque(kept).takeUnretainedValue().value }
        let value = make()
        if sqlite3_value_frombind(arguments[Int(index)]) != 0 {
            sqlite3_set_auxdata(context, index, Unmanaged.passRetained(Kept(value)).toOpaque()) { Unmanaged<Kept>.fromOpaque($0!).release() }
        }
        return value
    }

    static func register(on db: OpaquePointer) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY
        sqlite3_create_function_v2(
            db, compare, 4, flags, nil,
            { context, _, arguments in
                let arguments = arguments!
                let found = SwiftValueFunctions.kept(context, arguments, 2) { SwiftValueFunctions.valueType(sqlite3_value_int64(arguments[2])) }
                guard let type = found as? ValueType else {
                    sqlite3_result_error(context, "\(SwiftValueFunctions.compare): unknown type", -1)
                    return
                }
                let decode = { (index: Int32) -> Any? in
                    SwiftValueFunctions.kept(context, arguments, index) { type.decode(DatabaseValue(arguments[Int(index)])) }
                }
                guard let a = decode(0), let b = decode(1) else { return sqlite3_result_int(context, 0) }
                sqlite3_result_int(context, type.compare(a, b, sqlite3_value_int(arguments[3])) ? 1 : 0)
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
