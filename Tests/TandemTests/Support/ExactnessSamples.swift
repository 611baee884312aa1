import Foundation
@testable import Tandem

/// Sizes in declaration order, which is not their raw values' order ("l" < "m" < "s").
enum Size: String, Codable, CaseIterable, Comparable, Sendable {
    case small = "s", medium = "m", large = "l"
    static func < (a: Size, b: Size) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }
}

/// Shades ordered by their raw values, as their `<` says.
enum Shade: Int, Codable, CaseIterable, Comparable, Sendable {
    case dark = 1, mid = 5, light = 9
    static func < (a: Shade, b: Shade) -> Bool { a.rawValue < b.rawValue }
}

/// A value stored as JSON text.
struct Part: Codable, Hashable, Sendable {
    var name: String
    var at: Date
    var weight: Double
}

/// A record with a property of each class the exactness tests compare.
struct Sample: Record, Equatable {
    var id = ""
    var title: String
    var note: String?
    var count: Int
    var opt: Int?
    var score: Double
    var ratio: Double?
    var at: Date
    var due: Date?
    var size: Size
    var shade: Shade?
    var tag: UUID?
    var tags: [String]
    var part: Part?
    var folder_id: String?
    var folder: Folder? = nil
}

let sampleSchema: Schema = {
    do { return try Schema(records: [RecordTable(Sample.self), RecordTable(Folder.self)]) } catch { fatalError("\(error)") }
}()

/// Adversarial values for each class, and records made of them.
enum ExactnessSamples {
    /// Text in NFC and NFD, combining marks in both orders, a ZWJ sequence, flags, CR LF, NUL,
    /// case variants, and the characters canonically equivalent to ASCII ones.
    static let texts = [
        "", "a", "A", "b", "e", "E", "f", "é", "e\u{301}", "éa", "e\u{301}a", "\u{301}", "ée\u{301}",
        "K", "k", "\u{212A}", "\u{212A}a", ";", "\u{37E}", "`", "\u{1FEF}", "Å", "\u{212B}", "A\u{30A}",
        "o\u{308}\u{301}", "o\u{301}\u{308}", "ö\u{301}",
        "a\r\nb", "a\rb", "a\nb", "\r", "\n", "\r\n", "a\r", "\na",
        "a\u{0}b", "a\u{0}", "\u{0}", "\u{0}a",
        "🇺🇸🇸🇪", "🇸🇪", "🇸🇸", "🇺🇸", "👨‍👩‍👧", "👨", "\u{200D}", "ß", "SS", "ss", "日本", "😀", "%", "_", "ab", "abc", "z",
    ]

    static let ints = [Int.min, -1000, -5, -1, 0, 1, 3, 5, 42, Int.max]
    static let reals = [-Double.greatestFiniteMagnitude, -1.5, -1.0, -0.0, 0.0, 0.1, 1.5, 2.0, 1e300, Double.leastNonzeroMagnitude]

    /// Dates one unit in the last place apart (in Date's own seconds since 2001), with fractions
    /// of a second, before 1985 (where seconds since 1970 are finer than a Date), before 1970,
    /// and now.
    static let dates: [Date] = {
        let now = Date(timeIntervalSinceReferenceDate: 786_000_000.123_456_7)
        let early = Date(timeIntervalSince1970: 0.1)
        var dates = [
            now, early, Date(timeIntervalSince1970: 1_700_000_000.25), Date(timeIntervalSince1970: -1e9 + 0.5),
            Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSince1970: 0),
        ]
        for base in [now, early, Date(timeIntervalSinceReferenceDate: -500_000_000.7)] {
            let t = base.timeIntervalSinceReferenceDate
            dates += [t.nextUp, t.nextUp.nextUp, t.nextDown].map(Date.init(timeIntervalSinceReferenceDate:))
        }
        return dates
    }()

    static let uuids = (0..<3).map { UUID(uuidString: "0000000\($0)-ABCD-4000-8000-00000000000\($0)")! }
    static let folders = [Folder(id: "f0", name: "é"), Folder(id: "f1", name: "e\u{301}"), Folder(id: "f2", name: "a\r\nb"), Folder(id: "f3", name: "")]

    static func records(count: Int) -> [Sample] {
        var random = SeededRandom(seed: 0xe8ac7)
        func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { Bool.random(using: &random) ? value() : nil }
        return (0..<count).map { index in
            let title = pick(texts) + (Bool.random(using: &random) ? pick(texts) : "")
            return Sample(
                id: String(format: "s%03d", index), title: title, note: maybe(pick(texts)), count: pick(ints), opt: maybe(pick(ints)),
                score: pick(reals), ratio: maybe(pick(reals)), at: pick(dates), due: maybe(pick(dates)), size: pick(Size.allCases),
                shade: maybe(pick(Shade.allCases)), tag: maybe(pick(uuids)), tags: maybe([pick(texts)]) ?? [],
                part: maybe(Part(name: pick(texts), at: pick(dates), weight: pick([0.0, -0.0, 1.5]))),
                folder_id: maybe("f\(index % 5)"))
        }
    }
}
