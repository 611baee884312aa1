import Foundation

extension DatabaseSync {
    /// Compares each synced table's rows here with the server's, and with `repair`, makes the
    /// rows that differ the server's (only those, fetched by id).
    ///
    /// Per table, in one read transaction of this file (so at one download cursor): the whole
    /// table's checksum first (a client that agrees is done after one round trip per table,
    /// having sent and received checksums only); when it differs, a checksum per bucket of ids
    /// (about 128 rows each); then the digest of each row of the buckets that differ. Rows whose
    /// edits wait in the upload queue or are set aside, and rows the server changed after this
    /// file's cursor (the next download brings them), are left out and counted, never reported
    /// as differences. The canonical encoding and the checksum are ``RowDigest`` and
    /// ``RowChecksum``; DESIGN.md ("Verification") gives the consistent point on each backend.
    ///
    /// Any process may verify, owner or not. A repair writes the server's state of each differing
    /// row (a PUT, or a DELETE of a row the server does not hold) as a download does: not queued
    /// for upload, never over a row with a pending edit, and only if no download moved the
    /// cursor since the comparison (else the table is compared again, up to three times).
    ///
    /// The result is stored for ``SyncStatus/lastVerification``.
    /// - Parameters:
    ///   - backend: the backend this file syncs with.
    ///   - repair: write the server's state of each differing row.
    ///   - names: the synced tables to verify, by name (nil: all of them, in name order).
    /// - Returns: the report, each table with its differences by id.
    /// - Throws: ``TandemError/verificationFailed(_:)`` when this file never synced, a table is
    ///   not a synced one, a full sync is due, or a repair kept meeting downloads; the backend's
    ///   errors (``TandemError/invalidBackend(_:)`` and others) as they come.
    public func verify(with backend: any VerifyingBackend, repair: Bool = false, tables names: [String]? = nil) throws -> VerifyReport {
        let clock = ContinuousClock()
        let began = clock.now
        let startedAt = Date()
        let synced = database.schema.tables.filter { !$0.localOnly && !$0.insertOnly }.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        var chosen = synced
        if let names {
            chosen = try names.map { name in
                guard let table = synced.first(where: { $0.name == name }) else {
                    let kind = database.schema.table(named: name).map { $0.localOnly ? "is local-only" : "is insert-only (it keeps no rows)" } ?? "is not declared"
                    throw TandemError.verificationFailed("table \(name) \(kind); only synced tables are verified")
                }
                return table
            }
        }
        var verification = TableVerification(database: database, backend: backend)
        var tables: [VerifyReport.Table] = []
        for table in chosen {
            var attempt = 0
            while true {
                attempt += 1
                var result = try verification.compare(table)
                if repair, !result.report.differences.isEmpty {
                    guard let repaired = try verification.repair(result) else {
                        if attempt < 3 { continue }
                        throw TandemError.verificationFailed("downloads kept moving \(table.name)'s rows while repairing it; verify again")
                    }
                    result.report.repairedRows = repaired
                }
                tables.append(result.report)
                break
            }
        }
        let report = VerifyReport(
            tables: tables, roundTrips: verification.roundTrips, bytesMoved: verification.bytesMoved, backendTime: verification.backendTime,
            startedAt: startedAt, duration: clock.now - began)
        try LastVerification(report).store(in: database)
        return report
    }
}

/// One table's comparison (``DatabaseSync/verify(with:repair:tables:)``).
struct TableVerification {
    let database: SharedDatabase
    let backend: any VerifyingBackend
    var roundTrips = 0
    /// Payload bytes sent to and received from the backend (ids, checksums, digests, rows; not
    /// the protocol's own), and the time spent in its calls.
    var bytesMoved = 0
    var backendTime = Duration.zero

    init(database: SharedDatabase, backend: any VerifyingBackend) {
        self.database = database
        self.backend = backend
    }

    struct Result {
        var table: TableSchema
        var cursor: String
        var report: VerifyReport.Table
    }

    /// Rows per bucket aimed at: a bucket that differs costs its rows' digests (about 60 bytes each).
    static let rowsPerBucket = 128

    /// Runs one backend call, counted as a round trip with its time.
    private mutating func call<T>(_ body: () throws -> T) rethrows -> T {
        let clock = ContinuousClock()
        let began = clock.now
        defer {
            roundTrips += 1
            backendTime += clock.now - began
        }
        return try body()
    }

    /// A backend call started on a thread of its own while this side computes its part; its
    /// time is counted when ``finish(_:)`` collects it.
    private struct Started<T: Sendable> {
        let work: WorkAhead<(T, Duration)>
    }

    private func start<T: Sendable>(_ body: @escaping @Sendable () throws -> T) -> Started<T> {
        Started(
            work: WorkAhead(thread: "tandem.verify") {
                let clock = ContinuousClock()
                let began = clock.now
                let value = try body()
                return (value, clock.now - began)
            })
    }

    private mutating func finish<T: Sendable>(_ started: Started<T>) throws -> T {
        roundTrips += 1
        let (value, time) = try started.work.value()
        backendTime += time
        return value
    }

    /// Bytes of a bucket's checksum on the wire (its number and three 64-bit numbers).
    private static let checksumBytes = 28
    /// Bytes of a digest besides its id (three 32-bit numbers).
    private static let digestBytes = 12

    mutating func compare(_ table: TableSchema) throws -> Result {
        let columns = table.verifiedColumns
        let backend = self.backend
        return try database.read { tx in
            let cursor = try tx.stored(.cursor).stringValue ?? ""
            guard !cursor.isEmpty else {
                throw TandemError.verificationFailed("'\(database.path)' has not synced yet: there is nothing to compare with the server")
            }
            // Ids by their bytes throughout: Swift's `String` equality would make `é` and `e` with
            // a combining accent, two ids to SQLite and PostgreSQL, one.
            let pending = Set(try ViewedRows.pending(in: tx).filter { $0.table == table.name }.map { ExactText($0.id) })
            // The whole table first, without the ids' hashes: all a client that agrees computes,
            // while the backend computes its own.
            let serverTotalCall = start { try backend.checksums(of: table, bucketCount: 1)[0] ?? RowChecksum() }
            var total = RowChecksum()
            try ViewedRows.forEach(of: table, columns: columns, in: tx) { id, values in
                let (first, second) = try RowDigest.valueHash(id: id, values: values)
                total.add(first, second)
            }
            let localCount = Int(total.count)
            var bucketCount = 1
            while bucketCount * Self.rowsPerBucket < localCount, bucketCount < 65_536 { bucketCount *= 2 }
            var report = VerifyReport.Table(
                name: table.name, localRows: localCount, serverRows: 0, differences: [], pendingRows: pending.count, inFlightRows: 0, repairedRows: 0)
            let serverTotal = try finish(serverTotalCall)
            bytesMoved += Self.checksumBytes
            report.serverRows = Int(serverTotal.count)
            if serverTotal == total { return Result(table: table, cursor: cursor, report: report) }
            let serverBuckets = bucketCount == 1 ? nil : start { [bucketCount] in try backend.checksums(of: table, bucketCount: bucketCount) }
            var local: [Int: RowChecksum] = [:]
            try ViewedRows.forEach(of: table, columns: columns, in: tx) { id, values in
                let digest = try RowDigest(id: id, values: values)
                local[digest.bucket(of: bucketCount), default: RowChecksum()].add(digest)
            }
            let server = try serverBuckets.map { try finish($0) } ?? [0: serverTotal]
            bytesMoved += server.count * Self.checksumBytes
            let differing = Set(local.keys).union(server.keys).filter { local[$0] != server[$0] }.sorted()
            let serverDigests = start { [bucketCount] in try backend.rowDigests(of: table, bucketCount: bucketCount, buckets: differing) }
            let wanted = Set(differing)
            var localRows: [ExactText: RowDigest] = [:]
            try ViewedRows.forEach(of: table, columns: columns, in: tx) { id, values in
                guard wanted.contains(Int(try RowDigest.idHash(of: id) & UInt32(bucketCount - 1))) else { return }
                localRows[ExactText(id)] = try RowDigest(id: id, values: values)
            }
            var serverRows: [ExactText: RowDigest] = [:]
            for digest in try finish(serverDigests) {
                serverRows[ExactText(digest.id)] = digest
                bytesMoved += digest.id.utf8.count + Self.digestBytes
            }
            bytesMoved += differing.count * 4
            var candidates: [RowDifference] = []
            for (key, digest) in localRows {
                if let theirs = serverRows.removeValue(forKey: key) {
                    if theirs.first != digest.first || theirs.second != digest.second {
                        candidates.append(RowDifference(table: table.name, id: digest.id, kind: .differentValues))
                    }
                } else {
                    candidates.append(RowDifference(table: table.name, id: digest.id, kind: .onlyHere))
                }
            }
            candidates += serverRows.values.map { RowDifference(table: table.name, id: $0.id, kind: .onlyOnServer) }
            candidates = candidates.filter { !pending.contains(ExactText($0.id)) }
            if !candidates.isEmpty {
                let inFlight = try call { try backend.changed(after: cursor, table: table.name, ids: candidates.map(\.id)) }
                bytesMoved += candidates.reduce(cursor.utf8.count) { $0 + $1.id.utf8.count } + inFlight.reduce(0) { $0 + $1.utf8.count }
                let inFlightKeys = Set(inFlight.map(ExactText.init))
                report.inFlightRows = inFlightKeys.count
                candidates = candidates.filter { !inFlightKeys.contains(ExactText($0.id)) }
            }
            report.differences = candidates.sorted { ExactText($0.id) < ExactText($1.id) }
            return Result(table: table, cursor: cursor, report: report)
        }
    }

    /// Writes the server's state of each differing row; nil (nothing written) when a download
    /// moved the cursor since the comparison.
    mutating func repair(_ result: Result) throws -> Int? {
        let ids = result.report.differences.map(\.id)
        let backend = self.backend
        let rows = try call { try backend.rows(of: result.table, ids: ids) }
        bytesMoved += ids.reduce(0) { $0 + $1.utf8.count } + rows.reduce(0) { $0 + $1.id.utf8.count + $1.data.utf8.count }
        var found: [ExactText: String] = [:]
        for row in rows { found[ExactText(row.id)] = row.data }
        let changes = ids.map { id in
            found[ExactText(id)].map { ServerChange(op: .put, table: result.table.name, rowID: id, data: $0) }
                ?? ServerChange(op: .delete, table: result.table.name, rowID: id, data: nil)
        }
        return try database.write { tx -> Int? in
            guard (try tx.stored(.cursor).stringValue ?? "").utf8.elementsEqual(result.cursor.utf8) else { return nil }
            var pending: [RowKey: Int] = [:]
            for row in try ViewedRows.pending(in: tx) { pending[row] = 1 }
            try ChangeApplier(schema: database.schema, pending: pending).apply(changes, in: tx)
            return changes.filter { pending[RowKey(table: $0.table, id: $0.rowID)] == nil }.count
        }
    }
}
