import CSQLite
import Foundation

extension Connection {
    /// Runs `body` (one long statement) with `report` called about every 100 ms from inside
    /// SQLite's progress handler, on this thread.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/c3ref/progress_handler.html
    func reportingProgress<T>(_ report: @escaping () -> Void, _ body: () throws -> T) rethrows -> T {
        let pointer = Unmanaged.passRetained(ProgressReport(report)).toOpaque()
        // Every 10,000 virtual machine instructions: a look at the clock, cheap beside them.
        sqlite3_progress_handler(
            handle, 10_000,
            { pointer in
                Unmanaged<ProgressReport>.fromOpaque(pointer!).takeUnretainedValue().tick()
                return 0
            }, pointer)
        defer {
            sqlite3_progress_handler(handle, 0, nil, nil)
            Unmanaged<ProgressReport>.fromOpaque(pointer).release()
        }
        return try body()
    }
}

/// The callback of ``Connection/reportingProgress(_:_:)``, called at most every 100 ms.
private final class ProgressReport {
    let report: () -> Void
    var last = ContinuousClock.now

    init(_ report: @escaping () -> Void) { self.report = report }

    func tick() {
        let now = ContinuousClock.now
        guard now - last >= .milliseconds(100) else { return }
        last = now
        report()
    }
}
