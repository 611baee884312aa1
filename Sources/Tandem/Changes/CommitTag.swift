import Synchronization

/// Whose a commit of this process is: a tag that work binds for its length
/// (``bound(_:_:)``), carried by the commits made meanwhile into the ``DatabaseChange`` that
/// this process's change handlers are told. The sync owner tags its own writes (completing
/// uploads, applying downloads, its status) so that its handler can tell them from the
/// commits that queue uploads, wherever they ran.
struct CommitTag: Hashable, Sendable {
    private let id: UInt64

    /// The tag bound on this thread or task, nil when none is.
    @TaskLocal static var current: CommitTag?

    private static let last = Atomic<UInt64>(0)

    /// A new tag, equal to no other.
    init() {
        id = CommitTag.last.add(1, ordering: .relaxed).newValue
    }

    /// Runs `body` with this tag bound: the commits it makes carry it.
    func bound<T>(_ body: () throws -> T) rethrows -> T {
        try CommitTag.$current.withValue(self, operation: body)
    }
}
