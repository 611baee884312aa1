/// Moves a non-Sendable value to another thread.
///
/// Invariant: the sender gives up every use of `value` once it is wrapped; only the receiving
/// thread touches it afterwards.
struct Handover<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
