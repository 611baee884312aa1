import Foundation
import Tandem

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The reference API (api_server.py) as a sync connector, over HTTP with URLSession. It sends
/// Tandem's connector format (README.md, "Your own API") and follows the retry contract: a 2xx
/// answer gives the outcomes, a 4xx refuses the batch for good (Tandem then sends it one
/// transaction at a time and sets the refused one aside), anything else throws (retried).
struct APIConnector: SyncConnector {
    let base: URL
    var identifier: String { base.absoluteString }

    func upload(_ batch: UploadBatch) async throws -> [UploadOutcome] {
        let transactions = batch.transactions.map { transaction in
            JSONValue.object([
                "id": .integer(transaction.transactionID),
                "entries": .array(
                    transaction.entries.map { entry in
                        .object(["op": .string(entry.op.rawValue), "table": .string(entry.table), "id": .string(entry.rowID), "data": entry.data.map { .object($0) } ?? .null])
                    }),
            ])
        }
        let (status, answer) = try await post(
            "upload",
            [
                "version": .integer(1), "client_id": .string(batch.clientID), "epoch": .integer(batch.epoch), "transactions": .array(transactions),
            ])
        if (400..<500).contains(status) { return batch.transactions.map { UploadOutcome(transactionID: $0.transactionID, .refused(reason: "HTTP \(status): \(answer.jsonText)")) } }
        guard (200..<300).contains(status), case .object(let fields) = answer else { throw URLError(.badServerResponse) }
        if case .integer(let current)? = fields["stale_epoch"] { throw TandemError.staleEpoch(held: batch.epoch, current: current) }
        guard case .array(let results)? = fields["results"] else { throw URLError(.cannotParseResponse) }
        return results.compactMap { result in
            guard case .object(let r) = result, case .integer(let id)? = r["id"], r["outcome"] == .string("applied") else { return nil }
            return UploadOutcome(transactionID: id, .applied)  // a transaction without an outcome is retried
        }
    }

    func fetchChanges(after cursor: String, limit: Int) async throws -> ChangeBatch {
        let (status, answer) = try await post("fetch", ["version": .integer(1), "cursor": .string(cursor), "limit": .integer(Int64(limit))])
        guard (200..<300).contains(status), case .object(let fields) = answer, case .array(let items)? = fields["changes"],
            case .string(let next)? = fields["cursor"]
        else { throw URLError(.badServerResponse) }
        let changes = items.compactMap { item -> ServerChange? in
            guard case .object(let c) = item, case .string(let op)? = c["op"], case .string(let table)? = c["table"], case .string(let id)? = c["id"] else { return nil }
            return op == "DELETE" ? ServerChange(op: .delete, table: table, rowID: id, data: nil) : ServerChange(op: .put, table: table, rowID: id, data: c["data"]?.jsonText)
        }
        return ChangeBatch(changes: changes, nextCursor: next, hasMore: fields["has_more"] == .bool(true))
    }

    private func post(_ path: String, _ body: [String: JSONValue]) async throws -> (Int, JSONValue) {
        var request = URLRequest(url: base.appendingPathComponent(path), timeoutInterval: 30)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(JSONValue.object(body).jsonText.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONValue(parsing: String(decoding: data, as: UTF8.self))) ?? .null)
    }
}
