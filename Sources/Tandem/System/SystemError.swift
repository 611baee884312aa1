import Foundation

/// A failed system call, naming the call and the path: `open(2) failed for '/x/app.db-notify': Permission denied`.
public struct SystemError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// The failed call, e.g. `open(2)`.
    public let call: String
    /// The file the call was about, when there is one.
    public let path: String?
    /// The `errno` value.
    public let errno: Int32

    /// An error for `call` on `path` with `errno`.
    public init(call: String, path: String?, errno: Int32) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }

    public var description: String {
        let reason = DescriptorLimit.reason(errno: errno)
        if let path { return "\(call) failed for '\(path)': \(reason)" }
        return "\(call) failed: \(reason)"
    }
}

/// Runs a system call, retrying on EINTR; a result of -1 throws ``SystemError``.
@discardableResult
func syscall<T: FixedWidthInteger>(_ name: String, path: String? = nil, _ body: () -> T) throws -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(call: name, path: path, errno: code)
    }
}
