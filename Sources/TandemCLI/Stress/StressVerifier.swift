import Foundation
import Tandem

/// Checks a stress run from the database files alone, not from what the writers said, except
/// for the list of transactions they saw commit.
struct StressVerifier {
    struct Check: Equatable {
        let name: String
        let passed: Bool
        let detail: String
    }

    let log: StressLog
    let database: SharedDatabase
    let peer: SharedDatabase?
    let serverPath: String?

    func run() throws -> [Check] {
        var checks: [Check] = []
        checks.append(try committedPresent())
        checks.append(try noPartialTransactions(in: database, name: "no-partial-transactions"))
        checks.append(try allTransactionsPresent())
        if let peer {
            checks.append(try uploadQueueDrained())
            checks.append(try peerEqual(peer))
            checks.append(try noPartialTransactions(in: peer, name: "peer-no-partial-transactions"))
            if let serverPath { checks.append(try uploadedOnce(serverPath)) }
        } else {
            checks.append(try oneCrudEntryPerRow())
        }
        checks.append(try integrity(database, name: "integrity"))
        if let peer { checks.append(try integrity(peer, name: "peer-integrity")) }
        return checks
    }

    private func rowsPerTransaction(_ db: SharedDatabase) throws -> [String: Int] {
        var result: [String: Int] = [:]
        for row in try db.fetchAll("SELECT writer, txn, count(*) FROM stress GROUP BY writer, txn") {
            result["\(row[0].int64Value ?? -1)/\(row[1].int64Value ?? -1)"] = Int(row[2].int64Value ?? 0)
        }
        return result
    }

    /// Every transaction a writer saw commit is present.
    func committedPresent() throws -> Check {
        let present = try rowsPerTransaction(database)
        var missing: [String] = []
        for (writer, numbers) in log.committed.enumerated() {
            for number in numbers where present["\(writer)/\(number)"] == nil { missing.append("writer \(writer) txn \(number)") }
        }
        let total = log.committed.reduce(0) { $0 + $1.count }
        return Check(
            name: "committed-present", passed: missing.isEmpty,
            detail: missing.isEmpty ? "all \(total) reported commits present" : "\(missing.count) reported commits missing: \(missing.prefix(5).joined(separator: ", "))")
    }

    /// Every transaction present in `db` has all its rows, each once (no partial transaction, no duplicate).
    func noPartialTransactions(in db: SharedDatabase, name: String) throws -> Check {
        let present = try rowsPerTransaction(db)
        let bad = present.filter { $0.value != log.rowsPerTransaction }
        let duplicates = try db.read {
            try $0.scalar("SELECT count(*) - count(DISTINCT writer || '/' || txn || '/' || row) FROM stress").int64Value ?? 0
        }
        let passed = bad.isEmpty && duplicates == 0
        var detail = "every transaction has exactly \(log.rowsPerTransaction) row(s)"
        if !bad.isEmpty {
            detail =
                "\(bad.count) transactions with the wrong row count, e.g. \(bad.sorted { $0.key < $1.key }.prefix(3).map { "\($0.key): \($0.value) rows" }.joined(separator: ", "))"
        }
        if duplicates > 0 { detail += "; \(duplicates) duplicate rows" }
        return Check(name: name, passed: passed, detail: detail)
    }

    /// Each writer completed transactions 0..<M (killed writers were restarted and continued).
    func allTransactionsPresent() throws -> Check {
        let present = try rowsPerTransaction(database)
        var problems: [String] = []
        for writer in 0..<log.writers {
            let count = (0..<log.transactions).filter { present["\(writer)/\($0)"] != nil }.count
            if count != log.transactions { problems.append("writer \(writer): \(count) of \(log.transactions)") }
        }
        let extra = present.count - log.writers * log.transactions
        if extra > 0 { problems.append("\(extra) transactions no writer was asked for") }
        return Check(
            name: "all-transactions", passed: problems.isEmpty,
            detail: problems.isEmpty ? "\(log.writers) writers × \(log.transactions) transactions" : problems.prefix(5).joined(separator: "; "))
    }

    /// Without a backend: one CRUD entry per row, one transaction id per write transaction.
    func oneCrudEntryPerRow() throws -> Check {
        let queued = try database.uploadQueue.transactions(limit: .max).flatMap(\.entries).filter { $0.table == "stress" }
        let (ids, transactions) = try database.read { tx in
            (
                Set(try tx.fetchAll("SELECT id FROM stress").compactMap { $0[0].stringValue }),
                try tx.scalar("SELECT count(*) FROM (SELECT DISTINCT writer, txn FROM stress)").int64Value ?? 0
            )
        }
        let entriesPerRow = Dictionary(grouping: queued, by: \.rowID).mapValues(\.count)
        let entries = Int64(queued.count), rows = Int64(ids.count)
        let rowsWithOne = Int64(ids.filter { entriesPerRow[$0] == 1 }.count)
        let transactionIDs = Int64(Set(queued.map(\.transactionID)).count)
        let passed = entries == rows && rowsWithOne == rows && transactionIDs == transactions
        return Check(
            name: "crud-entries", passed: passed,
            detail: "\(entries) CRUD entries for \(rows) rows (\(rowsWithOne) with exactly one); \(transactionIDs) transaction ids for \(transactions) transactions")
    }

    func uploadQueueDrained() throws -> Check {
        let pending = try database.uploadQueue.pendingCount()
        return Check(name: "upload-queue-drained", passed: pending == 0, detail: "\(pending) CRUD entries still queued")
    }

    /// With a backend: the second client holds every row with equal state.
    func peerEqual(_ peer: SharedDatabase) throws -> Check {
        let query = "SELECT id, writer, txn, row, payload, written_at FROM stress ORDER BY id"
        let mine = try database.fetchAll(query), theirs = try peer.fetchAll(query)
        let passed = mine == theirs
        return Check(
            name: "peer-equal", passed: passed,
            detail: passed
                ? "\(theirs.count) rows equal on the second client"
                : "\(mine.count) rows here, \(theirs.count) on the second client, \(Set(mine).symmetricDifference(Set(theirs)).count) differ")
    }

    /// With the embedded backend: each row was uploaded exactly once.
    func uploadedOnce(_ serverPath: String) throws -> Check {
        let server = try SharedDatabase(path: serverPath)
        let (changes, distinct) = try server.read { tx in
            (
                try tx.scalar("SELECT count(*) FROM server_changes WHERE type = 'stress'").int64Value ?? 0,
                try tx.scalar("SELECT count(DISTINCT id) FROM server_changes WHERE type = 'stress'").int64Value ?? 0
            )
        }
        return Check(
            name: "uploaded-once", passed: changes == distinct,
            detail: "\(changes) changes in the backend's log for \(distinct) rows")
    }

    func integrity(_ db: SharedDatabase, name: String) throws -> Check {
        let result = try db.integrityCheck()
        return Check(name: name, passed: result == "ok", detail: "PRAGMA integrity_check: \(result.prefix(200))")
    }
}
