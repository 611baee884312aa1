import Foundation
import Testing
@testable import Tandem

/// SQLite has no NaN (it binds one as NULL): every write path refuses it, naming the column, as
/// it refuses infinity, and leaves nothing written.
@Suite struct NaNRefusalTests {
    let dir: TemporaryDirectory
    let db: SharedDatabase

    init() throws {
        dir = try TemporaryDirectory()
        db = try SharedDatabase(path: dir.path("nan.db"), schema: sampleSchema)
    }

    func sample(score: Double = 0, ratio: Double? = nil) -> Sample {
        Sample(id: "n", title: "t", count: 0, score: score, ratio: ratio, at: Date(timeIntervalSince1970: 0), size: .small, tags: [])
    }

    static let scoreMessage = "sample.score: NaN (not a number) cannot be stored (JSON has no representation for it; SQLite would store NULL)"
    static let ratioMessage = "sample.ratio: NaN (not a number) cannot be stored (JSON has no representation for it; SQLite would store NULL)"

    @Test func recordsRefuseNaNNamingTheColumn() throws {
        #expect(throws: TandemError.invalidValue(ValueRefusal(table: "sample", column: "score", rowID: "n", message: Self.scoreMessage))) {
            try db.insert(sample(score: .nan))
        }
        #expect(throws: TandemError.invalidValue(ValueRefusal(table: "sample", column: "ratio", rowID: "n", message: Self.ratioMessage))) {
            try db.insert(sample(ratio: .nan))
        }
        #expect(try db.count(RecordQuery<Sample>()) == 0)
        var stored = try db.insert(sample(ratio: 1))
        stored.ratio = .nan
        do {
            try db.update(stored)
            Issue.record("an update to NaN was accepted")
        } catch let error as SQLiteError {
            #expect(error.message == Self.ratioMessage)
        }
        stored.ratio = nil
        stored.score = -.nan
        #expect(throws: SQLiteError.self) { try db.upsert(stored) }
        #expect(try db.fetch(Sample.self, id: "n")?.ratio == 1, "nothing written")
        #expect(try db.uploadQueue.pendingCount() == 1)
    }

    @Test func sqlAndBulkWritesRefuseNaNNamingTheColumn() throws {
        for sql in ["INSERT INTO sample(id, title, score) VALUES ('x', 't', ?)", "INSERT INTO sample(id, title, score) SELECT 'x', 't', ? RETURNING id"] {
            do {
                try db.write { tx in _ = try tx.fetchAll(sql, [DatabaseValue.real(.nan)]) }
                Issue.record("\(sql): NaN was accepted")
            } catch let error as SQLiteError {
                #expect(error.message == Self.scoreMessage, "\(sql)")
                #expect(error.refusal == ValueRefusal(table: "sample", column: "score", message: Self.scoreMessage), "\(sql)")
            }
        }
        #expect(throws: TandemError.invalidValue(ValueRefusal(table: "sample", column: "score", rowID: "x", message: Self.scoreMessage))) {
            try db.write { tx in try tx.insert(into: "sample", columns: ["id", "title", "score"], rows: [[.text("x"), .text("t"), .real(.nan)]]) }
        }
        try db.write { tx in try tx.execute("INSERT INTO sample(id, title, score) VALUES ('y', 't', 1)") }
        do {
            try db.write { tx in try tx.execute("UPDATE sample SET count = 2 WHERE score < ?", [DatabaseValue.real(.nan)]) }
            Issue.record("NaN was accepted in a statement that writes")
        } catch TandemError.invalidArguments(let message) {
            #expect(message.hasPrefix("argument 1 is NaN (not a number), which SQLite reads as NULL"), "\(message)")
        }
        #expect(try db.fetchAll("SELECT id, count FROM sample") == [Row(columns: ["id", "count"], values: [.text("y"), .null])], "nothing written")
        #expect(try db.fetchAll("SELECT count(*) AS n FROM sample WHERE score = ?", [DatabaseValue.real(.nan)])[0]["n"] == .integer(0), "a read binds it as NULL")
    }
}
