import Foundation
import Testing
@testable import Tandem

/// Dates are stored as seconds since 1970 and read back as `Date(timeIntervalSince1970:)` of
/// them, in a column or inside a value stored as JSON text, within the documented bound.
@Suite struct DateStorageTests {
    @Test func datesReadBackWithinOneUnitInTheLastPlace() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("dates.db"), schema: sampleSchema)
        var random = SeededRandom(seed: 0xda7e)
        // Ordinary dates (2001 to 2035), dates from 1933 to 2038, and any finite date ISO 8601 holds.
        let written = (0..<600).map { n -> Date in
            let range: Range<Double> = n < 200 ? 0..<1.1e9 : n < 400 ? -2.1e9..<1.17e9 : -6.3e10..<2.5e11
            return Date(timeIntervalSinceReferenceDate: Double.random(in: range, using: &random))
        }
        let samples = written.enumerated().map { n, date in
            Sample(id: "d\(n)", title: "", count: 0, score: 0, at: date, size: .small, tags: [], part: Part(name: "", at: date, weight: 0))
        }
        try db.insert(contentsOf: samples)
        let read = Dictionary(uniqueKeysWithValues: try db.fetch(RecordQuery<Sample>()).map { ($0.id, $0) })
        var moved = 0
        for (n, date) in written.enumerated() {
            let sample = try #require(read["d\(n)"])
            let (s, t) = (date.timeIntervalSince1970, date.timeIntervalSinceReferenceDate)
            #expect(sample.at == Date(timeIntervalSince1970: s), "the stored seconds since 1970, read back")
            #expect(abs(sample.at.timeIntervalSinceReferenceDate - t) <= max(s.ulp, t.ulp), "one unit in the last place at most")
            if n < 400 { #expect(abs(sample.at.timeIntervalSinceReferenceDate - t) <= 0x1p-22) }
            #expect(sample.part?.at == sample.at, "inside JSON text, with its fraction of a second")
            if sample.at != date { moved += 1 }
            // A date a fetch returned reads back identically.
            #expect(Date(timeIntervalSince1970: sample.at.timeIntervalSince1970) == sample.at)
        }
        #expect(moved > 100, "dates that are not seconds since 1970 move (\(moved) of \(written.count))")
    }

    @Test func datesFromSecondsSince1970ReadBackIdentically() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("exact.db"), schema: sampleSchema)
        var random = SeededRandom(seed: 0x1970)
        let written =
            (0..<300).map { _ in Date(timeIntervalSince1970: Double.random(in: -6e10..<2.5e11, using: &random)) }
            + [0.1, 0.000_001, 1_700_000_000.123_456, -0.5].map(Date.init(timeIntervalSince1970:))
        try db.insert(
            contentsOf: written.enumerated().map { n, date in
                Sample(id: "e\(n)", title: "", count: 0, score: 0, at: date, size: .small, tags: [], part: Part(name: "", at: date, weight: 0))
            })
        for sample in try db.fetch(RecordQuery<Sample>()) {
            let date = written[Int(sample.id.dropFirst())!]
            #expect(sample.at == date && sample.part?.at == date, "\(date.timeIntervalSince1970)")
        }
        let row = try #require(try db.fetchAll("SELECT part FROM sample WHERE id = 'e302'").first)
        #expect(row["part"]?.stringValue?.contains("2023-11-14T22:13:20.123456") == true, "\(row)")
    }
}
