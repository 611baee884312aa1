import Foundation
import Testing
@testable import Tandem

/// Dates read from text: every ISO 8601 spelling of a generated instant reads as the same
/// seconds, an independent calendar agreeing; every broken spelling is refused with its reason;
/// imports and the JSON text of records follow the one rule.
@Suite struct TimestampTests {
    /// One generated instant: a UTC calendar date and time of day, fraction digits, a zone offset.
    struct Instant: CustomStringConvertible {
        var year, month, day, hour, minute, second: Int
        var fraction: String
        var offsetMinutes: Int

        var description: String { "\(year)-\(month)-\(day) \(hour):\(minute):\(second).\(fraction) \(offsetMinutes)min" }

        static func random(_ random: inout SeededRandom) -> Instant {
            let year = Int.random(in: 1600...9998, using: &random)
            let month = Int.random(in: 1...12, using: &random)
            let days = [31, ISO8601Timestamp.isLeap(Int64(year)) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
            let digits = Int.random(in: 0...12, using: &random)
            return Instant(
                year: year, month: month, day: Int.random(in: 1...days, using: &random),
                hour: Int.random(in: 0...23, using: &random), minute: Int.random(in: 0...59, using: &random),
                second: Int.random(in: 0...59, using: &random),
                fraction: String((0..<digits).map { _ in "0123456789".randomElement(using: &random)! }),
                offsetMinutes: Int.random(in: -(23 * 60 + 59)...(23 * 60 + 59), using: &random))
        }

        /// The local wall time for the offset, as Foundation's UTC calendar counts it.
        var local: DateComponents {
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = TimeZone(identifier: "UTC")!
            let instant = utc.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))!
            return utc.dateComponents([.year, .month, .day, .hour, .minute, .second], from: instant.addingTimeInterval(Double(offsetMinutes * 60)))
        }

        /// The seconds Foundation reads for the whole-second UTC form, plus the fraction exactly.
        var expected: Double {
            let text = String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", year, month, day, hour, minute, second)
            let whole = Decimal(Int64(try! Date.ISO8601FormatStyle().parse(text).timeIntervalSince1970))
            return Double("\(whole + Decimal(string: "0." + fraction + "0")!)")!
        }

        /// Every spelling of the instant: three date forms in two formats, three separators, two
        /// decimal signs, the zone in each form (or, at offset zero, none).
        var spellings: [String] {
            let l = local
            var iso = Calendar(identifier: .iso8601)
            iso.timeZone = TimeZone(identifier: "UTC")!
            let localDate = iso.date(from: DateComponents(year: l.year, month: l.month, day: l.day))!
            let week = iso.dateComponents([.yearForWeekOfYear, .weekOfYear, .weekday], from: localDate)
            let isoWeekday = (week.weekday! + 5) % 7 + 1  // Foundation: 1 is Sunday; ISO: 1 is Monday
            let ordinal = iso.ordinality(of: .day, in: .year, for: localDate)!
            let dates = [
                String(format: "%04d-%02d-%02d", l.year!, l.month!, l.day!), String(format: "%04d%02d%02d", l.year!, l.month!, l.day!),
                String(format: "%04d-%03d", l.year!, ordinal), String(format: "%04d%03d", l.year!, ordinal),
                String(format: "%04d-W%02d-%d", week.yearForWeekOfYear!, week.weekOfYear!, isoWeekday),
                String(format: "%04dW%02d%d", week.yearForWeekOfYear!, week.weekOfYear!, isoWeekday),
            ]
            let sign = offsetMinutes < 0 ? "-" : "+"
            let (h, m) = (abs(offsetMinutes) / 60, abs(offsetMinutes) % 60)
            var zones = [String(format: "%@%02d:%02d", sign, h, m), String(format: "%@%02d%02d", sign, h, m)]
            if m == 0 { zones.append(String(format: "%@%02d", sign, h)) }
            if offsetMinutes == 0 { zones += ["Z", "z", "", "-00:00"] }
            var result: [String] = []
            for (index, date) in dates.enumerated() {
                for separator in ["T", "t", " "] {
                    let decimal = index % 2 == 0 ? "." : ","
                    let time =
                        [String(format: "%02d:%02d:%02d", l.hour!, l.minute!, l.second!), String(format: "%02d%02d%02d", l.hour!, l.minute!, l.second!)][index % 2]
                        + (fraction.isEmpty ? "" : decimal + fraction)
                    result += zones.map { date + separator + time + $0 }
                }
            }
            return result
        }
    }

    func seconds(_ text: String) -> Double? { try? ISO8601Timestamp.secondsSince1970(text) }

    func refusal(_ text: String) -> String? {
        do { _ = try ISO8601Timestamp.secondsSince1970(text); return nil } catch { return error.reason }
    }

    @Test func everySpellingOfAnInstantReadsAsTheSameSecondsAsFoundationCounts() throws {
        var random = SeededRandom(seed: 0x150_8601)
        var instants = (0..<300).map { _ in Instant.random(&random) }
        instants.append(Instant(year: 2024, month: 1, day: 2, hour: 3, minute: 4, second: 5, fraction: "", offsetMinutes: 0))
        instants.append(Instant(year: 1969, month: 12, day: 31, hour: 23, minute: 59, second: 59, fraction: "999999999999", offsetMinutes: 0))
        instants.append(Instant(year: 2024, month: 2, day: 29, hour: 0, minute: 0, second: 0, fraction: "1", offsetMinutes: -60))
        for instant in instants {
            let expected = instant.expected
            for text in instant.spellings {
                let read = seconds(text)
                #expect(read?.bitPattern == expected.bitPattern, "\(text) (\(instant)): read \(read.map { "\($0)" } ?? "nothing: \(refusal(text)!)"), expected \(expected)")
            }
        }
    }

    @Test func reducedPrecisionEndOfDayAndEarlyYearsReadExactly() throws {
        let cases: [(String, Double)] = [
            ("2024-01-02", 1_704_153_600), ("2024-01-02T03", 1_704_164_400), ("2024-01-02T03:04Z", 1_704_164_640),
            ("2024-01-02T03:04:05", 1_704_164_645), ("2024-01-02 03:04:05", 1_704_164_645),
            ("2024-01-02T24:00", 1_704_240_000), ("2024-01-02T24:00:00.000Z", 1_704_240_000),
            ("2024-01-02T03:04:05.123456789+02:00", 1_704_157_445.123456789),
            // Proleptic Gregorian before 1582 (Foundation counts those days in the Julian calendar).
            ("0000-01-01T00:00:00Z", -62_167_219_200), ("0001-01-01", -62_135_596_800), ("1000-01-01", -30_610_224_000),
            ("9999-12-31T23:59:59.5Z", 253_402_300_799.5), ("1969-12-31T23:59:59.25Z", -0.75),
            ("2020-W53-7", 1_609_632_000), ("2021-W01-1", 1_609_718_400), ("2024-366", 1_735_603_200),
        ]
        for (text, expected) in cases {
            #expect(seconds(text) == expected, "\(text): \(refusal(text) ?? "\(seconds(text)!)")")
        }
    }

    @Test func brokenSpellingsAreRefusedWithTheirReason() throws {
        let named: [(String, String)] = [
            ("2024-01-02garbage", "'garbage' after the date is not a time"),
            ("2024-01-02T03:04:05Zjunk", "'junk' after the time"), ("2024-01-02T03:04:05 ", "' ' after the time"),
            ("2024-01-02T25:99:99Z", "hour 25 is out of range"), ("2024-01-02T03:60", "minute 60 is out of range"),
            ("2024-01-02T23:59:60Z", "leap second"), ("2024-01-02T24:00:01", "hour 24 is only the end of the day"),
            ("2023-02-29", "day 29 is out of range (1–28)"), ("1900-02-29", "day 29"), ("2024-04-31", "day 31"),
            ("2024-13-01", "month 13"), ("2024-00-10", "month 0"), ("2024-367", "day of the year 367"), ("2023-366", "day of the year 366"),
            ("2024-W53-1", "week 53"), ("2024-W00-1", "week 0"), ("2024-W01-8", "weekday 8"),
            ("2024-01", "a month without a day"), ("2024-W01", "a week without a day"), ("2024", "expected an ISO 8601 date"),
            ("2024-01-02T03:04.5", "a fraction is accepted on the seconds only"), ("2024-01-02T03:04:05.", "digits after the decimal sign"),
            ("2024-01-02T03:04:05+24:00", "zone hour 24"), ("2024-01-02T03:04:05+02:60", "zone minute 60"),
            ("not a date", "expected an ISO 8601 date"), (" 2024-01-02", "expected an ISO 8601 date"), ("+2024-01-02", "expected"),
            ("１９７０-01-01", "expected"), ("2024-01-02Z", "after the date is not a time"),
        ]
        for (text, reason) in named {
            let refused = refusal(text)
            #expect(refused?.contains(reason) == true, "\(text): \(refused ?? "read as \(seconds(text)!)")")
        }
        // Generated: every proper prefix of a full timestamp is one of its shorter forms or
        // refused, and text appended to a valid one is refused (but a zone after a time).
        let full = "2024-01-02T03:04:05.25+02:30"
        let shorter: Set<String> = [
            "2024-01-02", "2024-01-02T03", "2024-01-02T03:04", "2024-01-02T03:04:05", "2024-01-02T03:04:05.2",
            "2024-01-02T03:04:05.25", "2024-01-02T03:04:05.25+02",
        ]
        for length in 0..<full.count {
            let prefix = String(full.prefix(length))
            if shorter.contains(prefix) {
                #expect(seconds(prefix) != nil, "\(prefix): \(refusal(prefix) ?? "")")
            } else {
                #expect(refusal(prefix) != nil, "\(prefix) read as \(seconds(prefix) ?? 0)")
            }
        }
        for valid in ["2024-01-02", "2024-01-02T03:04", "2024-01-02T03:04:05Z", "20240102T030405.5+0100", "2024-W01-2", "2024-002"] {
            for suffix in ["x", " ", "Z", ":", "-", "+", "T", "\u{0}", "0Z", "é", ".5", "W", "00"] {
                let text = valid + suffix
                if text == "2024-01-02T03:04Z" { continue }
                #expect(refusal(text) != nil, "\(text.debugDescription) read as \(seconds(text) ?? 0)")
            }
        }
    }

    @Test func writtenTimestampsReadBackAsTheSameDouble() throws {
        var random = SeededRandom(seed: 0xda7e)
        var values: [Double] = [
            0, -0.0, 0.1, -0.1, -1.5, 1e-7, -1e-7, 1_704_164_645.123456, -62_167_219_200, 253_402_300_799.999,
            Date(timeIntervalSinceReferenceDate: 0.000_001).timeIntervalSince1970,
        ]
        for _ in 0..<2000 {
            values.append(Double.random(in: -62_167_219_200...253_402_300_799, using: &random))
            values.append(Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &random)).timeIntervalSince1970)
        }
        for value in values {
            let text = try #require(ISO8601Timestamp.string(secondsSince1970: value), "\(value)")
            let back = seconds(text)
            #expect(back == value, "\(value) → \(text) → \(back.map { "\($0)" } ?? refusal(text)!)")
        }
        #expect(ISO8601Timestamp.string(secondsSince1970: 1_704_164_645) == "2024-01-02T03:04:05Z")
        #expect(ISO8601Timestamp.string(secondsSince1970: -0.75) == "1969-12-31T23:59:59.25Z")
        #expect(ISO8601Timestamp.string(secondsSince1970: 253_402_300_800) == nil)
        #expect(ISO8601Timestamp.string(secondsSince1970: .infinity) == nil)
    }

    @Test func aDateInsideARecordsJSONReadsBackExactlyAndBrokenTextIsRefused() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("r.db"), schema: recordSchema)
        let at = Date(timeIntervalSince1970: 1_704_164_645.123456)
        let stored = try db.insert(TodoItem(title: "t", meta: Meta(tags: [], at: at)))
        let text = try #require(try db.fetchAll("SELECT meta FROM todo_item").first?["meta"]?.stringValue)
        #expect(text == #"{"at":"2024-01-02T03:04:05.123456Z","tags":[]}"#)
        #expect(try db.fetch(TodoItem.self, id: stored.id)?.meta?.at == at)
        for broken in ["2024-01-02garbage", "2024-01-02T25:00:00Z"] {
            try db.write { try $0.execute("UPDATE todo_item SET meta = ? WHERE id = ?", [#"{"at":"\#(broken)","tags":[]}"#, stored.id]) }
            let error = #expect(throws: TandemError.self) { try db.fetch(TodoItem.self, id: stored.id) }
            #expect("\(error.map { "\($0)" } ?? "")".contains("TodoItem.meta"), "\(broken)")
            #expect("\(error.map { "\($0)" } ?? "")".contains("is not an ISO 8601 date"), "\(broken)")
        }
    }

    @Test func importReadsTimestampsWholeOrRefusesNamingElementAndKey() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(
            path: dir.path("i.db"),
            schema: Schema(tables: [
                TableSchema(name: "notes", columns: [.text("title"), .integer("done"), .real("score"), .real("created_at")])
            ]))
        func importing(_ value: String) throws -> (status: Int32, stdout: String, stderr: String) {
            let file = dir.path("p.json")
            try #"[{"id":"a","title":"x"},{"id":"b","createdAt":"\#(value)"}]"#.write(toFile: file, atomically: true, encoding: .utf8)
            return try runTandem(["import", db.path, "notes", file])
        }
        for (text, expected) in [
            ("2024-01-02T03:04:05", 1_704_164_645.0), ("2024-01-02 03:04:05", 1_704_164_645),
            ("2024-01-02T03:04Z", 1_704_164_640), ("2024-01-02T03:04:05.5-01:00", 1_704_168_245.5),
        ] {
            let result = try importing(text)
            #expect(result.status == 0, "\(text): \(result.stderr)")
            #expect(try db.fetchAll("SELECT created_at FROM notes WHERE id = 'b'").first?[0] == .real(expected), "\(text)")
        }
        func fingerprint() throws -> [String] { try databaseFingerprint(db.path) }
        let before = try fingerprint()
        for (text, reason) in [("2024-01-02T25:99:99Z", "hour 25 is out of range"), ("2024-01-02garbage", "'garbage' after the date")] {
            let result = try importing(text)
            #expect(result.status == 1, "\(text) was accepted")
            #expect(result.stderr.contains("element [1], key 'createdAt'") && result.stderr.contains(reason), "\(text): \(result.stderr)")
        }
        #expect(try fingerprint() == before, "a refused import changed the database files")
    }
}
