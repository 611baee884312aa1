/// Fencing: every sync write checks, in its own transaction, that the epoch has not moved on.
enum Fence {
    static func check(_ tx: Transaction, epoch: Int64) throws {
        let current = try tx.stored(.epoch).int64Value ?? 0
        guard current == epoch else { throw TandemError.staleEpoch(held: epoch, current: current) }
    }
}
