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
}
