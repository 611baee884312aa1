import Foundation

/// Up to `maximum` reader connections, opened on demand. A connection is handed to one caller
/// at a time and never handed out inside an open transaction.
final class ReaderPool: @unchecked Sendable {
    // Invariant: `idle` and `count` are guarded by `condition`; a connection taken from `idle`
    // belongs to one caller until it is returned.
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var count = 0
    private let maximum: Int
    private let open: () throws -> Connection

    /// - Parameter first: a reader opened already (as `open` opens one), kept as the first idle one.
    init(maximum: Int, first: Connection? = nil, open: @escaping () throws -> Connection) {
        self.maximum = max(1, maximum)
        self.open = open
        if let first {
            idle = [first]
            count = 1
        }
    }

    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try take()
        defer { give(connection) }
        return try body(connection)
    }

    private func take() throws -> Connection {
        condition.lock()
        while idle.isEmpty && count >= maximum { condition.wait() }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        count += 1
        condition.unlock()
        do {
            return try open()
        } catch {
            condition.lock()
            count -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func give(_ connection: Connection) {
        connection.rollbackIfNeeded()
        condition.lock()
        idle.append(connection)
        condition.signal()
        condition.unlock()
    }

    func close() {
        condition.lock()
        idle.removeAll()
        condition.unlock()
    }
}
