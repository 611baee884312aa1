/// The one rule for dates read from text (JSON imports into `real` columns, `Date`s inside a
/// record's JSON text columns): ISO 8601 dates and times, parsed whole and exactly, or refused
/// with the reason.
///
/// Accepted: a date as `2024-01-02` (calendar), `2024-002` (ordinal) or `2024-W01-2` (week),
/// in the extended or the basic format (`20240102`, `2024002`, `2024W012`), optionally followed
/// by `T` (also `t` or a space, as RFC 3339 and SQLite allow) and a time: `03`, `03:04`,
/// `03:04:05`, with a fraction of any length on the seconds (`.5` or `,5`), `24:00:00` for the
/// end of the day, in the extended or basic format (`030405`); then optionally a zone: `Z`,
/// `±hh`, `±hh:mm` or `±hhmm`. A date without a time is midnight UTC, and a time without a zone
/// is UTC, as SQLite's date functions read them: a payload means the same instant on every host,
/// whatever its time zone. Years are 0000–9999 in the proleptic Gregorian calendar.
///
/// Refused: anything after the date or time, a value out of range (hour 25, February 30, week 53
/// of a year with 52), a leap second (seconds since 1970 have none), a month or week without a
/// day (`2024-01`, `2024-W01`: periods, not instants), a fraction on hours or minutes.
///
/// Foundation's parsers do not fit: `ISO8601DateFormatter` with `.withFullDate` reads the date
/// and ignores whatever follows, and with `.withFractionalSeconds` keeps milliseconds only;
/// `Date.ISO8601FormatStyle` accepts `25:99:99` and `2023-02-29`, rolling them over; both count
/// days before 1582 in the Julian calendar.
enum ISO8601Timestamp {
    /// Why a text is not a timestamp, in words for the user.
    struct Refusal: Error, Equatable, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// The text's instant as seconds since 1970 (UTC), the double nearest its exact value.
    static func secondsSince1970(_ text: String) throws(Refusal) -> Double {
        var scanner = Scanner(Array(text.utf8))
        let days = try scanner.date()
        var seconds = days * 86_400
        var fraction: [UInt8] = []
        if let separator = scanner.peek {
            guard separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t") || separator == UInt8(ascii: " ") else {
                throw Refusal(reason: "'\(scanner.rest)' after the date is not a time (T followed by hh:mm[:ss[.fff]], then Z or ±hh:mm)")
            }
            scanner.index += 1
            let time = try scanner.time()
            seconds += time.seconds
            fraction = time.fraction
            seconds -= try scanner.zone()
            guard scanner.peek == nil else {
                throw Refusal(reason: "'\(scanner.rest)' after the time is not a zone (Z, ±hh or ±hh:mm)")
            }
        }
        return exactDouble(seconds: seconds, fraction: fraction)
    }

    /// `seconds + 0.fraction` (decimal digits) as the double nearest that exact value.
    private static func exactDouble(seconds: Int64, fraction: [UInt8]) -> Double {
        guard fraction.contains(where: { $0 != UInt8(ascii: "0") }) else { return Double(seconds) }
        if seconds >= 0 { return Double("\(seconds).\(String(decoding: fraction, as: UTF8.self))")! }
        // seconds + 0.d = -((|seconds| - 1) + (1 - 0.d)), and 1 - 0.d is 0.(10ⁿ - d).
        return Double("-\(-seconds - 1).\(String(decoding: complement(fraction), as: UTF8.self))")!
    }

    /// 10ⁿ − d for the n decimal digits d (not all zero), as n digits: 9 − each digit, plus 1.
    static func complement(_ digits: [UInt8]) -> [UInt8] {
        var result = digits.map { UInt8(ascii: "9") - ($0 - UInt8(ascii: "0")) }
        var index = result.count - 1
        while result[index] == UInt8(ascii: "9") {
            result[index] = UInt8(ascii: "0")
            index -= 1
        }
        result[index] += 1
        return result
    }

    /// The instant as `2024-01-02T03:04:05.25Z`, with the fewest fraction digits that
    /// ``secondsSince1970(_:)`` reads back as the same double, or nil outside years 0000–9999.
    static func string(secondsSince1970 value: Double) -> String? {
        guard value.isFinite, let fixed = FixedDecimal(value) else { return nil }
        var whole = fixed.integer
        var fraction = Array(fixed.fraction.utf8)
        while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        if fixed.negative {
            whole = -whole
            if !fraction.isEmpty {
                whole -= 1
                fraction = complement(fraction)
            }
        }
        let earliest = daysSince1970(year: 0, month: 1, day: 1) * 86_400
        let latest = daysSince1970(year: 10_000, month: 1, day: 1) * 86_400
        guard whole >= earliest, whole < latest else { return nil }
        let days = (whole - (whole % 86_400 + 86_400) % 86_400) / 86_400
        let second = whole - days * 86_400
        let (year, month, day) = civil(days)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let yearText = String(repeating: "0", count: 4 - String(year).count) + String(year)
        return "\(yearText)-\(two(month))-\(two(day))T\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60))"
            + (fraction.isEmpty ? "" : "." + String(decoding: fraction, as: UTF8.self)) + "Z"
    }

    /// A double's shortest round-trip decimal (Swift's `description`) written out without an
    /// exponent: sign, integer part, fraction digits.
    private struct FixedDecimal {
        let negative: Bool
        let integer: Int64
        let fraction: String

        init?(_ value: Double) {
            var text = Substring("\(value)")
            negative = text.hasPrefix("-")
            if negative { text = text.dropFirst() }
            var exponent = 0
            if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
                exponent = Int(text[text.index(after: e)...].replacingOccurrences(of: "+", with: "")) ?? 0
                text = text[..<e]
            }
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            var digits = String(parts[0]) + (parts.count > 1 ? String(parts[1]) : "")
            var point = parts[0].count + exponent
            guard point <= 18 else { return nil }
            if point < 0 {
                digits = String(repeating: "0", count: -point) + digits
                point = 0
            }
            if digits.count < point { digits += String(repeating: "0", count: point - digits.count) }
            integer = Int64(digits.prefix(point)) ?? 0
            fraction = String(digits.dropFirst(point))
        }
    }

    // MARK: - Calendar arithmetic (proleptic Gregorian)

    static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the date, counting in eras of 400 years (146,097 days each), each
    /// year starting on March 1 so that the leap day ends it.
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The calendar date of a day since 1970 (the reverse of ``daysSince1970(year:month:day:)``).
    static func civil(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// ISO weekday of a day since 1970: 1 is Monday, 7 Sunday (1970-01-01 was a Thursday).
    static func weekday(_ days: Int64) -> Int64 { ((days + 3) % 7 + 7) % 7 + 1 }

    /// The Monday that starts week 1 of `year`: the week holding January 4.
    static func firstMonday(ofWeekYear year: Int64) -> Int64 {
        let january4 = daysSince1970(year: year, month: 1, day: 4)
        return january4 - (weekday(january4) - 1)
    }

    // MARK: - Reading

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }
        var rest: String { String(decoding: bytes[index...], as: UTF8.self) }

        func isDigit(_ byte: UInt8?) -> Bool { byte.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false }

        /// Exactly `count` digits, or nil (and nothing consumed).
        mutating func number(_ count: Int) -> Int64? {
            guard index + count <= bytes.count, bytes[index..<index + count].allSatisfy({ isDigit($0) }) else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + count] { value = value * 10 + Int64(byte - UInt8(ascii: "0")) }
            index += count
            return value
        }

        mutating func skip(_ byte: Character) -> Bool {
            guard peek == byte.asciiValue else { return false }
            index += 1
            return true
        }

        func check(_ value: Int64, _ range: ClosedRange<Int64>, _ what: String) throws(Refusal) {
            guard range.contains(value) else {
                throw Refusal(reason: "\(what) \(value) is out of range (\(range.lowerBound)–\(range.upperBound))")
            }
        }

        /// A calendar, ordinal or week date, in days since 1970.
        mutating func date() throws(Refusal) -> Int64 {
            let expected = "expected an ISO 8601 date (2024-01-02) or date and time (2024-01-02T03:04:05.5+02:00)"
            guard let year = number(4) else { throw Refusal(reason: expected) }
            let extended = skip("-")
            if skip("W") {
                guard let week = number(2) else { throw Refusal(reason: "expected a two-digit week after 'W'") }
                if extended && !skip("-") || !isDigit(peek) {
                    throw Refusal(reason: "a week without a day (\(year)-W\(week)) is a period, not an instant; add the weekday (1–7)")
                }
                let day = number(1)!
                let monday = ISO8601Timestamp.firstMonday(ofWeekYear: year)
                try check(week, 1...(ISO8601Timestamp.firstMonday(ofWeekYear: year + 1) - monday) / 7, "week")
                try check(day, 1...7, "weekday")
                return monday + (week - 1) * 7 + day - 1
            }
            // Ordinal (YYYY-DDD) or calendar (YYYY-MM-DD): three digits then not a digit is a day of the year.
            let start = index
            if let ordinal = number(3), !isDigit(peek) {
                try check(ordinal, 1...(ISO8601Timestamp.isLeap(year) ? 366 : 365), "day of the year")
                return ISO8601Timestamp.daysSince1970(year: year, month: 1, day: 1) + ordinal - 1
            }
            index = start
            guard let month = number(2) else { throw Refusal(reason: expected) }
            guard extended ? skip("-") : isDigit(peek) else {
                throw Refusal(reason: "a month without a day (\(year)-\(month)) is a period, not an instant; add the day")
            }
            guard let day = number(2) else { throw Refusal(reason: expected) }
            try check(month, 1...12, "month")
            try check(day, 1...ISO8601Timestamp.daysIn(month: month, year: year), "day")
            return ISO8601Timestamp.daysSince1970(year: year, month: month, day: day)
        }

        /// hh[:mm[:ss[.fff]]] or hh[mm[ss[.fff]]]: seconds into the day and the fraction's digits.
        mutating func time() throws(Refusal) -> (seconds: Int64, fraction: [UInt8]) {
            guard let hour = number(2) else { throw Refusal(reason: "expected a time (hh:mm[:ss[.fff]]) after the date, found '\(rest)'") }
            var minute: Int64 = 0, second: Int64 = 0
            var fraction: [UInt8] = []
            let extended = peek == UInt8(ascii: ":")
            if extended ? skip(":") : isDigit(peek) {
                guard let m = number(2) else { throw Refusal(reason: "expected two digits of minutes, found '\(rest)'") }
                minute = m
                if extended ? skip(":") : isDigit(peek) {
                    guard let s = number(2) else { throw Refusal(reason: "expected two digits of seconds, found '\(rest)'") }
                    second = s
                    if skip(".") || skip(",") {
                        while isDigit(peek) { fraction.append(peek!); index += 1 }
                        guard !fraction.isEmpty else { throw Refusal(reason: "expected digits after the decimal sign of the seconds") }
                    }
                }
            }
            if peek == UInt8(ascii: ".") || peek == UInt8(ascii: ",") {
                throw Refusal(reason: "a fraction is accepted on the seconds only (write hh:mm:ss.fff)")
            }
            if hour == 24 {
                guard minute == 0, second == 0, !fraction.contains(where: { $0 != UInt8(ascii: "0") }) else {
                    throw Refusal(reason: "hour 24 is only the end of the day (24:00:00)")
                }
            }
            try check(hour, 0...24, "hour")
            try check(minute, 0...59, "minute")
            if second == 60 { throw Refusal(reason: "second 60 (a leap second) has no place in seconds since 1970") }
            try check(second, 0...59, "second")
            return (hour * 3600 + minute * 60 + second, fraction)
        }

        /// Z, ±hh, ±hh:mm or ±hhmm (or nothing: UTC), as seconds east of UTC.
        mutating func zone() throws(Refusal) -> Int64 {
            if skip("Z") || skip("z") { return 0 }
            let sign: Int64
            if skip("+") { sign = 1 } else if skip("-") { sign = -1 } else { return 0 }
            guard let hours = number(2) else { throw Refusal(reason: "expected a zone offset as ±hh or ±hh:mm, found '\(rest)'") }
            var minutes: Int64 = 0
            if skip(":") || isDigit(peek) {
                guard let m = number(2) else { throw Refusal(reason: "expected two digits of zone minutes, found '\(rest)'") }
                minutes = m
            }
            try check(hours, 0...23, "zone hour")
            try check(minutes, 0...59, "zone minute")
            return sign * (hours * 3600 + minutes * 60)
        }
    }
}
