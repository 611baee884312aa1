/// `ps_download`: the changes of a download backlog larger than one batch, kept until the rest
/// has arrived, so the whole backlog is applied in one transaction.
enum DownloadStage {
    /// Appends `changes`, numbered from `count` on.
    static func append(_ changes: [ServerChange], after count: Int, in tx: Transaction) throws {
        for (offset, change) in changes.enumerated() {
            try tx.executeOwn(
                "INSERT INTO ps_download(seq, op, type, id, data) VALUES (?, ?, ?, ?, ?)",
                [count + offset, change.op.rawValue, change.table, change.rowID, change.data])
        }
    }

    /// Calls `body` with each staged change, in order.
    static func forEach(in tx: Transaction, _ body: (ServerChange) throws -> Void) throws {
        try tx.connection.forEachRow("SELECT op, type, id, data FROM ps_download ORDER BY seq") { row in
            try body(
                ServerChange(
                    op: row[0].stringValue.flatMap(ServerChange.Operation.init(rawValue:)) ?? .put,
                    table: row[1].stringValue ?? "", rowID: row[2].stringValue ?? "", data: row[3].stringValue))
            return true
        }
    }

    static func clear(in tx: Transaction) throws {
        try tx.executeOwn("DELETE FROM ps_download")
    }
}
