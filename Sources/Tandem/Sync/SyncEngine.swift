import Foundation
import Synchronization

/// The owner's sync loop: runs a ``SyncPass`` on start, whenever `ps_crud` changes (any
/// process), when the backend announces changes, and after failures with capped backoff.
final class SyncEngine: Sendable {
    private struct State {
        var stopped = false
        var status = SyncStatus()
        var lastStatusWrite: Date = .distantPast
        var changeToken: UInt64?
        var started = false
    }

    private let database: SharedDatabase
    private let backend: any SyncBackend
    private let backendName: String
    private let epoch: Int64
    private let clientID: String
    private let signal = Signal()
    private let finished = DispatchSemaphore(value: 0)
    private let state = Mutex(State())
    private let onEvent: @Sendable (SyncEvent) -> Void

    init(database: SharedDatabase, backend: any SyncBackend, backendName: String, epoch: Int64,
         onEvent: @escaping @Sendable (SyncEvent) -> Void) throws {
        self.database = database
        self.backend = backend
        self.backendName = backendName
        self.epoch = epoch
        self.clientID = try database.clientID()
        self.onEvent = onEvent
        var status = (try? database.syncStatus()) ?? SyncStatus()
        status.backend = backendName
        state.withLock { $0.status = status }
    }

    func start() throws {
        let token = try database.addChangeHandler { [signal] change in
            if change.isUnknown || change.rawTables.contains(InternalTables.crud) { signal.raise() }
        }
        state.withLock { $0.changeToken = token; $0.started = true }
        if let reason = database.changeWakeupUnavailableReason {
            onEvent(.pollingForChanges("inotify is unavailable (\(reason)); other processes' commits are noticed every \(database.configuration.changePollInterval) s"))
        }
        spawn("tandem.sync") { [self] in loop() }
        spawn("tandem.sync-wait") { [self] in waitForBackend() }
    }

    /// Stops the loop and waits for its last write to finish.
    func stop() {
        let (token, started) = state.withLock { s -> (UInt64?, Bool) in
            s.stopped = true
            return (s.changeToken, s.started)
        }
        if let token { database.removeChangeHandler(token) }
        signal.raise()
        backend.close()
        if started { finished.wait() }
    }

    private var stopped: Bool { state.withLock { $0.stopped } }

    private func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func loop() {
        defer { finished.signal() }
        var backoff = Backoff()
        while !stopped {
            do {
                let pass = SyncPass(database: database, backend: backend, epoch: epoch, clientID: clientID, onEvent: onEvent)
                let result = try pass.run()
                if result.moreToUpload { signal.raise() }
                backoff.reset()
                try recordSuccess()
                checkpointIfLarge()
                signal.wait(timeout: 30)
            } catch let error as TandemError {
                if case .staleEpoch = error {
                    onEvent(.lostOwnership(error.description))
                    return
                }
                fail(error, backoff: &backoff)
            } catch {
                fail(error, backoff: &backoff)
            }
        }
    }

    /// The owner keeps the WAL bounded: readers are short, so a TRUNCATE checkpoint usually
    /// succeeds at once; when a reader pins the WAL it waits at most 100 ms and tries again later.
    private func checkpointIfLarge() {
        guard database.walSize() > database.configuration.walCheckpointThreshold else { return }
        _ = try? database.checkpoint(.truncate)
    }

    private func fail(_ error: Error, backoff: inout Backoff) {
        let message = "\(error)"
        onEvent(.error(message))
        let changed = state.withLock { s -> Bool in
            let changed = s.status.lastError != message || s.status.connected
            s.status.lastError = message
            s.status.connected = false
            return changed
        }
        if changed { try? writeStatus() }
        let delay = backoff.next()
        let deadline = Date(timeIntervalSinceNow: delay)
        // Sleep out the backoff; local writes do not cut it short, a stop does.
        while !stopped, Date() < deadline { _ = signal.wait(timeout: deadline.timeIntervalSinceNow) }
        if !stopped { signal.raise() }
    }

    private func recordSuccess() throws {
        let now = Date()
        let needsWrite = state.withLock { s -> Bool in
            let changed = !s.status.connected || s.status.lastError != nil || !s.status.hasSynced
                || now.timeIntervalSince(s.lastStatusWrite) > 1
            s.status.connected = true
            s.status.lastError = nil
            s.status.hasSynced = true
            s.status.lastSyncedAt = now
            return changed
        }
        if needsWrite { try writeStatus() }
    }

    private func writeStatus() throws {
        let status = state.withLock { s -> SyncStatus in
            s.lastStatusWrite = Date()
            return s.status
        }
        let json = String(decoding: try SyncStatus.encoder.encode(status), as: UTF8.self)
        try database.write { tx in
            try Fence.check(tx, epoch: epoch)
            try tx.execute("INSERT OR REPLACE INTO ps_kv(key, value) VALUES ('sync_status', ?)", [json])
        }
    }

    /// Blocks in the backend's push/long-poll wait and raises the signal on news. Each wait
    /// starts after the newest change already announced, so one change wakes the loop once.
    private func waitForBackend() {
        var known: String?
        while !stopped {
            do {
                if known == nil {
                    known = try database.read { try $0.scalar("SELECT value FROM ps_kv WHERE key = 'cursor'").stringValue } ?? ""
                }
                if let newest = try backend.waitForChanges(after: known ?? "", timeout: 10) {
                    known = newest
                    signal.raise()
                }
            } catch {
                known = nil
                if stopped { return }
                Thread.sleep(forTimeInterval: 1)
            }
        }
    }
}
