import Foundation

/// Up to `maximum` reader connections, opened on demand. A connection is handed to one caller
/// at a time and never handed out inside an open transaction.
final class ReaderPool: @unchecked Sendable {
    // Invariant: `idle` and `count` are guarded by `condition`; a connection taken from `idle`
    // belongs to one caller until it is returned.
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var count = 0
    private var closed = false
    private var checkpointing = true
    private let maximum: Int
    private let open: () throws -> Connection
    private let path: String

    /// - Parameter path: the database file, for the error after ``close()``.
    /// - Parameter first: a reader opened already (as `open` opens one), kept as the first idle one.
    init(path: String, maximum: Int, first: Connection? = nil, open: @escaping () throws -> Connection) {
        self.path = path
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
        while idle.isEmpty && count >= maximum && !closed { condition.wait() }
        if closed {
            condition.unlock()
            throw TandemError.misuse("'\(path)' was closed; open it again to read it")
        }
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
        if closed {
            count -= 1
            let checkpointing = self.checkpointing
            condition.unlock()
            connection.close(checkpointing: checkpointing)
            return
        }
        idle.append(connection)
        condition.signal()
        condition.unlock()
    }

    /// Closes the idle connections now and each one in use when it is given back; later reads throw.
    func close(checkpointing: Bool = true) {
        condition.lock()
        self.checkpointing = checkpointing
        closed = true
        let closing = idle
        count -= idle.count
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
        for connection in closing { connection.close(checkpointing: checkpointing) }
    }
}
