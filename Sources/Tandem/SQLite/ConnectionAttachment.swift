/// The key of a value that a layer above keeps with each connection (a cache of what it read
/// through it), found by the key's type, as SwiftUI's environment keys are: this layer keeps
/// the values without knowing their types.
protocol ConnectionAttachmentKey {
    associatedtype Value
    /// The value of a connection that has none yet.
    static var defaultValue: Value { get }
}

extension Connection {
    /// The value kept with this connection under `key`.
    subscript<Key: ConnectionAttachmentKey>(_ key: Key.Type) -> Key.Value {
        get { attachments[ObjectIdentifier(key)] as? Key.Value ?? Key.defaultValue }
        set { attachments[ObjectIdentifier(key)] = newValue }
    }
}
