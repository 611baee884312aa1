import Foundation
import Testing
@testable import Tandem

/// A refused value carries its table, column and (where the write knows it) row as fields, on
/// every write path: an INSERT and an UPDATE through SQL (``SQLiteError/refusal``), the bulk
/// insert and records (``TandemError/invalidValue(_:)``); every adversarial value of
/// ``BulkInsertTests/values`` (and BLOBs and infinities) that a column refuses, in every column.
@Suite struct ValueRefusalTests {
    @Test func everyWritePathNamesTableColumnAndRowAsFields() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("refusals.db"), schema: BulkInsertTests.schema)
        try db.write { tx in
            for table in ["synced", "local"] { try tx.execute("INSERT INTO \(table)(id) VALUES ('row')") }
        }
        var refusals = 0
        for table in ["synced", "local", "events"] {
            for value in BulkInsertTests.values + [.blob(Data([1])), .real(.infinity), .real(-.infinity)] {
                for (column, type) in [("i", ColumnSchema.ColumnType.integer), ("r", .real), ("t", .text)] where ColumnRule.stored(value, in: type) == nil {
                    refusals += 1
                    let place = "\(table).\(column) \(value)"
                    do {
                        try db.execute("INSERT INTO \(table)(id, \(column)) VALUES ('new', ?)", [value])
                        Issue.record("\(place): INSERT accepted it")
                    } catch let error as SQLiteError {
                        #expect(error.refusal == ValueRefusal(table: table, column: column, message: error.message), "\(place): \(error)")
                    }
                    if table != "events" {  // insert-only: no UPDATE
                        do {
                            try db.execute("UPDATE \(table) SET \(column) = ? WHERE id = 'row'", [value])
                            Issue.record("\(place): UPDATE accepted it")
                        } catch let error as SQLiteError {
                            #expect(error.refusal == ValueRefusal(table: table, column: column, message: error.message), "\(place): \(error)")
                        } catch TandemError.invalidArguments(let message) {
                            // A NaN in an UPDATE's SET is refused by its position (no trigger sees it).
                            #expect(value.isNaN && message.hasPrefix("argument 1 is NaN"), "\(place): \(message)")
                        }
                    }
                    do {
                        _ = try db.write { tx in try tx.insert(into: table, columns: ["id", column], rows: [[.text("bulk"), value]]) }
                        Issue.record("\(place): the bulk insert accepted it")
                    } catch let error as TandemError {
                        #expect(error.table == table && error.column == column && error.rowID == "bulk", "\(place): \(error)")
                    }
                }
            }
        }
        #expect(refusals > 100)
        #expect(try count(db, "SELECT count(*) FROM synced WHERE id <> 'row'") == 0, "nothing written")
    }

    /// A record's refused value (on insert) and a stored value that does not read as its
    /// property's type (on fetch) name table, column and row as fields.
    @Test func recordsNameTableColumnAndRowAsFields() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("records.db"), schema: sampleSchema)
        for score in [Double.nan, .infinity, -.infinity] {
            let sample = Sample(id: "s", title: "t", count: 0, score: score, at: Date(timeIntervalSince1970: 0), size: .small, tags: [])
            do {
                try db.insert(sample)
                Issue.record("\(score) was accepted")
            } catch let error as TandemError {
                #expect(error.table == "sample" && error.column == "score" && error.rowID == "s", "\(error)")
            }
        }
        try db.execute("INSERT INTO sample(id, title, count, score, at, size, tags) VALUES ('bad', 't', 0, 0, 0, 'enormous', '[]')")
        do {
            _ = try db.fetch(RecordQuery<Sample>())
            Issue.record("an unknown raw value was read")
        } catch let error as TandemError {
            #expect(error.table == "sample" && error.column == "size" && error.rowID == "bad", "\(error)")
        }
    }
}
