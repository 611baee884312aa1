import Foundation
import Testing
@testable import Tandem

/// One value mapping: `Data`, `Date` and `UUID` bound as SQL arguments are what records store,
/// so a record written through the typed API is found by SQL with the same Swift values, and a
/// row written by SQL with them reads back as the record.
@Suite struct ArgumentMappingTests {
    struct Stamp: Record, Equatable {
        var id = ""
        var at: Date
        var uid: UUID
        var bytes: Data
    }

    /// Adversarial values: sub-second and negative dates, the epochs, an all-zero UUID, empty
    /// and non-UTF-8 bytes, NUL bytes.
    static let samples: [Stamp] = {
        var generator = SystemRandomNumberGenerator()
        var samples = [
            Stamp(id: "a", at: Date(timeIntervalSince1970: 0), uid: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), bytes: Data()),
            Stamp(id: "b", at: Date(timeIntervalSinceReferenceDate: 0), uid: UUID(), bytes: Data([0, 0, 0xff, 0xfe])),
            Stamp(id: "c", at: Date(timeIntervalSince1970: -1.000_001), uid: UUID(), bytes: Data("é\0".utf8)),
        ]
        for n in 0..<40 {
            let seconds = Double.random(in: -4e9...4e9, using: &generator)
            let bytes = Data((0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            samples.append(Stamp(id: "r\(n)", at: Date(timeIntervalSince1970: seconds), uid: UUID(), bytes: bytes))
        }
        return samples
    }()

    @Test func argumentsBindAsRecordsStore() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("m.db"), schema: try Schema(records: [RecordTable(Stamp.self)]))
        for sample in Self.samples {
            _ = try db.insert(sample)
            let found = try db.fetchAll("SELECT id FROM stamp WHERE at = ? AND uid = ? AND bytes = ?", [sample.at, sample.uid, sample.bytes])
            #expect(found.map { $0[0] } == [.text(sample.id)], "\(sample)")
            try db.execute("INSERT INTO stamp (id, at, uid, bytes) VALUES (?, ?, ?, ?)", ["sql-" + sample.id, sample.at, sample.uid, sample.bytes])
            let read = try #require(try db.fetch(Stamp.self, id: "sql-" + sample.id))
            #expect(read.uid == sample.uid && read.bytes == sample.bytes && read.at.timeIntervalSince1970 == sample.at.timeIntervalSince1970, "\(read) against \(sample)")
        }
    }

    /// A row's values read back as the Swift values bound (`Row.decode`), equal to what the
    /// record reads: the same mapping both ways.
    @Test func rowsDecodeAsArgumentsBindAndRecordsRead() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("m.db"), schema: try Schema(records: [RecordTable(Stamp.self)]))
        for sample in Self.samples {
            try db.execute("INSERT INTO stamp (id, at, uid, bytes) VALUES (?, ?, ?, ?)", [sample.id, sample.at, sample.uid, sample.bytes])
            let row = try #require(try db.fetchAll("SELECT at, uid, bytes FROM stamp WHERE id = ?", [sample.id]).first)
            let decoded = Stamp(id: sample.id, at: try row.decode(at: 0), uid: try row.decode(named: "uid"), bytes: try row.decode(Data.self, at: 2))
            #expect(
                decoded.at.timeIntervalSince1970.bitPattern == sample.at.timeIntervalSince1970.bitPattern && decoded.uid == sample.uid && decoded.bytes == sample.bytes,
                "\(decoded) against \(sample)")
            #expect(try db.fetch(Stamp.self, id: sample.id) == decoded)
        }
    }

    /// Generated integers, reals, booleans and text, with the data promise's adversarial values,
    /// read back by `Row.decode` as bound, bit for bit.
    @Test func everyScalarReadsBackAsItBinds() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(
            path: dir.path("s.db"), schema: Schema(tables: [TableSchema(name: "v", columns: [.integer("i"), .real("x"), .text("s"), .integer("b")])]))
        var generator = SystemRandomNumberGenerator()
        var integers: [Int64] = [.min, .max, 0, -1, 1 << 53 + 1]
        var reals: [Double] = [-0.0, 2.0, 0.1 + 0.2, 5e-324, .greatestFiniteMagnitude, -1.7976931348623157e308, 123_456_789.012_345_67]
        var texts = ["", "nul\u{0}inside", "\u{1}\u{1f}\u{7f}", #"{"a":[1,2]}"#, "null", "é\u{301}", "🧮", "'; DROP TABLE v; --"]
        for _ in 0..<60 {
            integers.append(Int64.random(in: .min ... .max, using: &generator))
            reals.append(Double(bitPattern: UInt64.random(in: 0 ... .max, using: &generator) & ~(0x7FF << 52) | (UInt64.random(in: 1...2046, using: &generator) << 52)))
            texts.append(String((0..<Int.random(in: 0...12, using: &generator)).map { _ in Character(Unicode.Scalar(UInt8.random(in: 0...127, using: &generator))) }))
        }
        for (n, (integer, (real, text))) in zip(integers, zip(reals, texts)).enumerated() {
            let flag = n % 2 == 0
            try db.execute("INSERT INTO v (id, i, x, s, b) VALUES (?, ?, ?, ?, ?)", ["r\(n)", integer, real, text, flag])
            let row = try #require(try db.fetchAll("SELECT i, x, s, b FROM v WHERE id = ?", ["r\(n)"]).first)
            #expect(try row.decode(Int64.self, at: 0) == integer)
            #expect(try row.decode(Double.self, at: 1).bitPattern == real.bitPattern, "\(real)")
            #expect(try row.decode(String.self, at: 2) == text)
            #expect(try row.decode(Bool.self, at: 3) == flag)
        }
    }

    /// A value that is not of the type asked for is refused naming the column, the type and the
    /// value; NULL reads as nil through `decodeIfPresent`.
    @Test func aValueOfAnotherTypeIsRefusedNamingIt() throws {
        let row = Row(columns: ["uid", "small", "at", "gone"], values: [.text("not-a-uuid"), .integer(300), .text("yesterday"), .null])
        for (attempt, words) in [
            ({ _ = try row.decode(UUID.self, at: 0) }, ["column uid", "'not-a-uuid' (text)", "a UUID"]),
            ({ _ = try row.decode(Int8.self, at: 1) }, ["column small", "300 (integer)", "an integer that fits Int8"]),
            ({ _ = try row.decode(Date.self, named: "at") }, ["column at", "seconds since 1970"]),
            ({ _ = try row.decode(Date.self, named: "gone") }, ["column gone", "NULL"]),
            ({ _ = try row.decode(Date.self, named: "nowhere") }, ["no column nowhere"]),
        ] as [(() throws -> Void, [String])] {
            let error = #expect(throws: TandemError.self) { try attempt() }
            let message = error.map { "\($0)" } ?? ""
            #expect(words.allSatisfy { message.contains($0) }, "\(message)")
        }
        #expect(try row.decodeIfPresent(Date.self, at: 3) == nil)
    }
}
