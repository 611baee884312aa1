import Foundation
import Synchronization

/// The shared record at the start of `<db>-write.lock`: what the write lock and the checkpoints
/// of every Tandem process that maps the file tell each other.
///
/// The stored properties are the file's layout: nine 64-bit words in declaration order at
/// offset 0 (`CheckpointPolicyTests` pins the offsets; processes running other builds of Tandem
/// map the same file, so never reorder, resize or remove a field, only append). A new lock file
/// is all zeros, which is every field's "nothing yet".
///
/// Invariants (and the limits of what they promise):
/// - Every word is read and written with relaxed atomics through ``Shared``; none is read and
///   then written as one step except ``tickets`` (an atomic add).
/// - Who writes what: ``holder``, ``streak``, ``ticketsServed`` and ``migrating`` only the process holding the
///   `flock`; ``tickets`` every waiter, by atomic add only; ``walFramesCommitted`` and
///   ``checkpointWaitFrames`` the holder; ``checkpointedFrames`` and ``catchUpPending`` the
///   holder and also checkpoint passes running outside the lock (see ``Checkpointing``).
/// - Everything is advisory: a process killed halfway leaves the record consistent enough, and
///   nothing but scheduling (who queues, who checkpoints when) depends on it; the `flock` alone
///   excludes writers and SQLite alone keeps the WAL correct.
/// - The file can be written by any process that can open it, so a value read from it is never
///   trusted to be in range: ``Shared``'s typed views clamp what they read.
struct WriteLockRecord: Equatable, Sendable {
    /// The pid of the last holder of the lock.
    var holder: Int64 = 0
    /// The last holder's consecutive holds, 0 once its streak ended.
    var streak: Int64 = 0
    /// The next ticket of the queue to draw (wrapping).
    var tickets: Int64 = 0
    /// How many frames of the WAL the last checkpoint of any Tandem writer had copied when it
    /// ended, or the WAL size a writer claimed when it started one: writers checkpoint when the
    /// WAL holds a threshold of frames more than this (or, once it has restarted and holds
    /// fewer, a threshold of frames).
    var checkpointedFrames: Int64 = 0
    /// Nonzero after a checkpoint ran outside the lock, until a writer holding the lock has
    /// copied the frames committed meanwhile (so the WAL restarts even when the writer that
    /// checkpointed never writes again).
    var catchUpPending: Int64 = 0
    /// One past the ticket of the last waiter that took the lock through the queue (0 before any).
    var ticketsServed: Int64 = 0
    /// The frames in the WAL after the last commit of any Tandem writer (0 before any).
    var walFramesCommitted: Int64 = 0
    /// The WAL's frames from which the holder waits for a running checkpoint, after a wait ran
    /// out (0: the default limit, ``CheckpointPolicy/limitFrames``).
    var checkpointWaitFrames: Int64 = 0
    /// The pid of the holder while it runs a schema migration (0: none): a waiter whose busy
    /// timeout runs out while that process lives keeps waiting (``WriteLock``).
    var migrating: Int64 = 0

    /// Bytes the record may grow to: the first page of the lock file, mapped by every process.
    static let mappedSize = 4096

    /// The record in a lock file as every process that maps it shares it.
    struct Shared: @unchecked Sendable {
        // Invariant: `base` points at ``WriteLockRecord/mappedSize`` bytes mapped `MAP_SHARED`
        // from the lock file, from ``map(fd:path:)`` until ``unmap()``; each field is an
        // `Atomic<Int64>` at its offset in ``WriteLockRecord``.
        private let base: UnsafeMutableRawPointer

        /// Maps the first page of the lock file `fd` (allocating it first).
        /// - Throws: ``SystemError`` naming `posix_fallocate(3)` or `mmap(2)` and `path`.
        static func map(fd: Int32, path: String) throws -> Shared {
            var stats = stat()
            if fstat(fd, &stats) == 0, stats.st_size < WriteLockRecord.mappedSize {
                // Allocated, not just sized: a write through the mapping to a hole on a full file
                // system would kill the process with SIGBUS.
                let result = posix_fallocate(fd, 0, off_t(WriteLockRecord.mappedSize))
                if result != 0 { throw SystemError(call: "posix_fallocate(3)", path: path, errno: result) }
            }
            let mapped = mmap(nil, WriteLockRecord.mappedSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
            guard let mapped, mapped != MAP_FAILED else { throw SystemError(call: "mmap(2)", path: path, errno: errno) }
            return Shared(base: mapped)
        }

        private init(base: UnsafeMutableRawPointer) { self.base = base }

        /// Ends the mapping; nothing may use the record afterwards.
        func unmap() { munmap(base, WriteLockRecord.mappedSize) }

        private func word(_ field: WritableKeyPath<WriteLockRecord, Int64>) -> UnsafeMutablePointer<Atomic<Int64>> {
            guard let offset = MemoryLayout<WriteLockRecord>.offset(of: field) else {
                preconditionFailure("internal inconsistency: a computed property of WriteLockRecord used as a field")
            }
            return (base + offset).assumingMemoryBound(to: Atomic<Int64>.self)
        }

        /// One field, raw as it is in the file.
        subscript(field: WritableKeyPath<WriteLockRecord, Int64>) -> Int64 {
            get { word(field).pointee.load(ordering: .relaxed) }
            nonmutating set { word(field).pointee.store(newValue, ordering: .relaxed) }
        }

        /// Adds 1 to ``WriteLockRecord/tickets`` atomically; the ticket drawn (the old value).
        func drawTicket() -> Int64 {
            word(\.tickets).pointee.wrappingAdd(1, ordering: .relaxed).oldValue
        }

        /// Every field as read now, one at a time (not one consistent snapshot).
        var fields: WriteLockRecord {
            WriteLockRecord(
                holder: self[\.holder], streak: self[\.streak], tickets: self[\.tickets],
                checkpointedFrames: self[\.checkpointedFrames], catchUpPending: self[\.catchUpPending],
                ticketsServed: self[\.ticketsServed], walFramesCommitted: self[\.walFramesCommitted],
                checkpointWaitFrames: self[\.checkpointWaitFrames])
        }

        /// ``WriteLockRecord/checkpointedFrames``, never below 0.
        var checkpointedFrames: Int64 {
            get { max(0, self[\.checkpointedFrames]) }
            nonmutating set { self[\.checkpointedFrames] = newValue }
        }

        /// ``WriteLockRecord/catchUpPending`` as a flag.
        var catchUpPending: Bool {
            get { self[\.catchUpPending] != 0 }
            nonmutating set { self[\.catchUpPending] = newValue ? 1 : 0 }
        }

        /// ``WriteLockRecord/walFramesCommitted``, never below 0.
        var walFramesCommitted: Int64 {
            get { max(0, self[\.walFramesCommitted]) }
            nonmutating set { self[\.walFramesCommitted] = newValue }
        }

        /// ``WriteLockRecord/checkpointWaitFrames``, never below 0.
        var checkpointWaitFrames: Int64 {
            get { max(0, self[\.checkpointWaitFrames]) }
            nonmutating set { self[\.checkpointWaitFrames] = newValue }
        }
    }
}
