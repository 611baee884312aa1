import Foundation
import Synchronization

/// A task executor with a thread of its own, for a connector's calls: Swift's shared
/// concurrency pool has as many threads as cores, and an app whose async code blocks them (a
/// semaphore, a synchronous read) would otherwise hold up every upload until its timeout.
///
/// Jobs run in the order they come, one at a time; ``stop()`` ends the thread once the jobs
/// queued before it have run.
/// Related documentation: https://developer.apple.com/documentation/swift/taskexecutor
final class ConnectorThread: TaskExecutor, @unchecked Sendable {
    // Invariant: `state` is the only shared mutable state; `ready` is signalled once per job
    // queued and once by `stop()`.
    private let state = Mutex<(jobs: [UnownedJob], stopped: Bool)>(([], false))
    private let ready = DispatchSemaphore(value: 0)

    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        state.withLock { $0.jobs.append(job) }
        ready.signal()
    }

    /// Ends the thread after the jobs already queued (the thread holds the executor until then).
    func stop() {
        state.withLock { $0.stopped = true }
        ready.signal()
    }

    private func run() {
        while true {
            ready.wait()
            let (job, stopped) = state.withLock { ($0.jobs.isEmpty ? nil : $0.jobs.removeFirst(), $0.stopped) }
            if let job { job.runSynchronously(on: asUnownedTaskExecutor()) } else if stopped { return }
        }
    }
}
