import Foundation
import Testing
@testable import Tandem

/// For every class of value that SQL and Swift compare differently by nature (text, NaN, dates,
/// negative numbers and -0.0, optionals under `!`, enums with their own order, values stored as
/// JSON text, UUIDs in either case), generated predicates select through `fetch`, `count`, `ids`
/// and `delete(where:)` exactly the records `filter` selects from what a fetch returns, or are
/// documented to be evaluated in Swift: then `fetch` agrees and the others throw naming the
/// expression.
@Suite struct PredicateExactnessTests {
    typealias Case = (name: String, predicate: Predicate<Sample>)
    typealias Samples = ExactnessSamples

    static let textConstants = [
        "", "a", "e", "é", "e\u{301}", "\u{301}", "éa", "f", "K", "\u{212A}", ";", "\n", "\r", "\r\n",
        "a\r", "\u{0}", "a\u{0}", "🇸🇸", "🇸🇪", "👨", "\u{200D}", "ß", "Å", "o\u{301}\u{308}", "ab",
    ]

    static var textCases: [Case] {
        var all: [Case] = []
        for t in textConstants {
            let d = t.debugDescription
            all += [
                ("title == \(d)", #Predicate { $0.title == t }), ("title != \(d)", #Predicate { $0.title != t }),
                ("title < \(d)", #Predicate { $0.title < t }), ("title <= \(d)", #Predicate { $0.title <= t }),
                ("title > \(d)", #Predicate { $0.title > t }), ("title >= \(d)", #Predicate { $0.title >= t }),
                ("\(d) < title", #Predicate { t < $0.title }),
                ("title starts with \(d)", #Predicate { $0.title.starts(with: t) }),
                ("title contains \(d)", #Predicate { $0.title.contains(t) }),
                ("note == \(d)", #Predicate { $0.note == t }), ("note != \(d)", #Predicate { $0.note != t }),
                ("(note ?? title) == \(d)", #Predicate { ($0.note ?? $0.title) == t }),
                ("(note ?? zz) starts with \(d)", #Predicate { ($0.note ?? "zz").starts(with: t) }),
                ("folder?.name == \(d)", #Predicate { $0.folder?.name == t }),
                ("folder?.name contains \(d) == true", #Predicate { $0.folder?.name.contains(t) == true }),
                ("!(folder?.name starts with \(d) == true)", #Predicate { !($0.folder?.name.starts(with: t) == true) }),
            ]
            if t <= "zz" { all.append(("(\(d)...zz) contains title", #Predicate { (t..."zz").contains($0.title) })) }
        }
        let someTexts = ["é", "a", "\u{212A}", "a\r\nb", "🇸🇪"], withNil: [String?] = ["e\u{301}", nil, "K"]
        all += [
            ("texts contain title", #Predicate { someTexts.contains($0.title) }),
            ("!texts contain title", #Predicate { !someTexts.contains($0.title) }),
            ("texts with nil contain note", #Predicate { withNil.contains($0.note) }),
            ("!texts with nil contain note", #Predicate { !withNil.contains($0.note) }),
            ("texts with nil contain folder?.name", #Predicate { withNil.contains($0.folder.flatMap { $0.name }) }),
            ("!texts with nil contain folder?.name", #Predicate { !withNil.contains($0.folder.flatMap { $0.name }) }),
            ("(note ?? \"\") == title", #Predicate { ($0.note ?? "") == $0.title }),
            ("note < title", #Predicate { ($0.note ?? "") < $0.title }),
            ("title starts with note", #Predicate { $0.title.starts(with: $0.note ?? "") }),
            ("folder?.name == note", #Predicate { $0.folder?.name == $0.note }),
            ("id == s001", #Predicate { $0.id == "s001" }),
        ]
        return all
    }

    static var numberCases: [Case] {
        var all: [Case] = [
            ("count > -1", #Predicate { $0.count > -1 }), ("count >= -1000", #Predicate { $0.count >= -1000 }),
            ("count == -5", #Predicate { $0.count == -5 }), ("-5...5 contains count", #Predicate { (-5...5).contains($0.count) }),
            ("-5..<5 contains count", #Predicate { (-5..<5).contains($0.count) }), ("(opt ?? 0) == -1", #Predicate { ($0.opt ?? 0) == -1 }),
            ("(opt ?? 0) != -1", #Predicate { ($0.opt ?? 0) != -1 }), ("(opt ?? -1) < 0", #Predicate { ($0.opt ?? -1) < 0 }),
            ("score == -0.0", #Predicate { $0.score == -0.0 }), ("score < -0.0", #Predicate { $0.score < -0.0 }),
            ("score >= -1.5", #Predicate { $0.score >= -1.5 }), ("(ratio ?? -1.5) < -1.0", #Predicate { ($0.ratio ?? -1.5) < -1.0 }),
            ("(ratio ?? 1) == -0.0", #Predicate { ($0.ratio ?? 1) == -0.0 }), ("count > 1 - 2", #Predicate { $0.count > 1 - 2 }),
        ]
        let nan = Double.nan, optionalNaN: Double? = .nan, withNaN = [1.5, Double.nan, -0.0]
        all += [
            ("ratio == .nan", #Predicate { $0.ratio == optionalNaN }), ("ratio != .nan", #Predicate { $0.ratio != optionalNaN }),
            ("score == .nan", #Predicate { $0.score == nan }), ("score != .nan", #Predicate { $0.score != nan }),
            ("score < .nan", #Predicate { $0.score < nan }), ("score >= .nan", #Predicate { $0.score >= nan }),
            (".nan > score", #Predicate { nan > $0.score }), ("!(score <= .nan)", #Predicate { !($0.score <= nan) }),
            ("[1.5, .nan, -0.0] contains score", #Predicate { withNaN.contains($0.score) }),
            ("![1.5, .nan, -0.0] contains score", #Predicate { !withNaN.contains($0.score) }),
        ]
        // Optionals under `!` and inside collections.
        let withNilInts: [Int?] = [3, nil], ints: [Int?] = [3, -5], uuids: [UUID?] = [Samples.uuids[1], nil]
        let shades: [Shade?] = [.mid, nil], notes: [String?] = ["a", nil]
        all += [
            ("![3, nil] contains opt", #Predicate { !withNilInts.contains($0.opt) }),
            ("[3, nil] contains opt == false", #Predicate { withNilInts.contains($0.opt) == false }),
            ("![3, -5] contains opt", #Predicate { !ints.contains($0.opt) }),
            ("[3, -5] contains opt == false", #Predicate { ints.contains($0.opt) == false }),
            ("![u1, nil] contains tag", #Predicate { !uuids.contains($0.tag) }),
            ("![mid, nil] contains shade", #Predicate { !shades.contains($0.shade) }),
            ("![a, nil] contains note", #Predicate { !notes.contains($0.note) }),
            ("![3, nil] contains opt && count > 0", #Predicate { !withNilInts.contains($0.opt) && $0.count > 0 }),
            ("!(opt == 3)", #Predicate { !($0.opt == 3) }),
            ("!((opt ?? 0) > 2)", #Predicate { !(($0.opt ?? 0) > 2) }),
        ]
        return all
    }

    /// Dates: each stored one (as a fetch reads it), its neighbours one unit in the last place
    /// away, and dates that no stored value reads as.
    static func dateCases(_ fetched: [Sample]) -> [Case] {
        var constants = Samples.dates
        for at in Set(fetched.map(\.at)) {
            let t = at.timeIntervalSinceReferenceDate
            constants += [at, Date(timeIntervalSinceReferenceDate: t.nextUp), Date(timeIntervalSinceReferenceDate: t.nextDown)]
        }
        var all: [Case] = []
        for d in constants {
            let name = "\(d.timeIntervalSinceReferenceDate)"
            let optional: Date? = d, fallback = Date(timeIntervalSinceReferenceDate: d.timeIntervalSinceReferenceDate.nextUp)
            all += [
                ("at == \(name)", #Predicate { $0.at == d }), ("at != \(name)", #Predicate { $0.at != d }),
                ("at < \(name)", #Predicate { $0.at < d }), ("at <= \(name)", #Predicate { $0.at <= d }),
                ("at > \(name)", #Predicate { $0.at > d }), ("at >= \(name)", #Predicate { $0.at >= d }),
                ("\(name) <= at", #Predicate { d <= $0.at }),
                ("due == \(name)", #Predicate { $0.due == optional }), ("!(due == \(name))", #Predicate { !($0.due == optional) }),
                ("(due ?? next) > \(name)", #Predicate { ($0.due ?? fallback) > d }),
                ("(\(name)...next) contains at", #Predicate { (d...fallback).contains($0.at) }),
            ]
        }
        let some = Array(constants.prefix(4))
        all += [
            ("dates contain at", #Predicate { some.contains($0.at) }), ("!dates contain at", #Predicate { !some.contains($0.at) }),
            ("(due ?? at) == at", #Predicate { ($0.due ?? $0.at) == $0.at }), ("at < (due ?? at)", #Predicate { $0.at < ($0.due ?? $0.at) }),
        ]
        return all
    }

    static var enumCases: [Case] {
        var all: [Case] = []
        for size in Size.allCases {
            all += [
                ("size == \(size)", #Predicate { $0.size == size }), ("size != \(size)", #Predicate { $0.size != size }),
                ("size < \(size)", #Predicate { $0.size < size }), ("size >= \(size)", #Predicate { $0.size >= size }),
                ("\(size) > size", #Predicate { size > $0.size }),
            ]
        }
        for shade in Shade.allCases {
            let optional: Shade? = shade, dark = Shade.dark
            all += [
                ("shade == \(shade)", #Predicate { $0.shade == optional }), ("!(shade == \(shade))", #Predicate { !($0.shade == optional) }),
                ("(shade ?? dark) < \(shade)", #Predicate { ($0.shade ?? dark) < shade }),
            ]
        }
        let sizes = [Size.small, .large], small = Size.small, medium = Size.medium
        all += [
            ("sizes contain size", #Predicate { sizes.contains($0.size) }),
            ("small...medium contains size", #Predicate { (small...medium).contains($0.size) }),
            ("shade == nil", #Predicate { $0.shade == nil }),
        ]
        return all
    }

    /// UUIDs (some rows hold them upper-cased, as another program may write them) and values
    /// stored as JSON text.
    static func storedAsTextCases(_ fetched: [Sample]) -> [Case] {
        var all: [Case] = []
        for u in Samples.uuids {
            let optional: UUID? = u
            all += [
                ("tag == \(u)", #Predicate { $0.tag == optional }), ("tag != \(u)", #Predicate { $0.tag != optional }),
                ("(tag ?? u) < \(u)", #Predicate { ($0.tag ?? u) < u }),
            ]
        }
        for tags in [["é"], ["e\u{301}"], [], ["a\r\nb"], ["\u{212A}"]] {
            all += [("tags == \(tags)", #Predicate { $0.tags == tags }), ("tags != \(tags)", #Predicate { $0.tags != tags })]
        }
        let parts = Array(Set(fetched.compactMap(\.part))).sorted { $0.name < $1.name }.prefix(6)
        for part in parts {
            let optional: Part? = part
            var zero = part
            zero.weight = zero.weight == 0 ? -zero.weight : zero.weight
            let signFlipped: Part? = zero
            all += [
                ("part == \(part.name.debugDescription)", #Predicate { $0.part == optional }),
                ("part == (-0.0 flipped) \(part.name.debugDescription)", #Predicate { $0.part == signFlipped }),
                ("!(part == \(part.name.debugDescription))", #Predicate { !($0.part == optional) }),
            ]
        }
        let someParts = parts.prefix(2).map { Optional($0) } + [nil]
        all.append(("parts with nil contain part", #Predicate { someParts.contains($0.part) }))
        return all
    }

    /// Predicates with a part that has no SQL form: `fetch` evaluates them in Swift.
    static let fallbackCases: [(Case, spelling: String)] = [
        (("title.count > 2", #Predicate { $0.title.count > 2 }), "$0.title.<a computed Int>"),
        (("tags contains a", #Predicate { $0.tags.contains("a") }), "SequenceContains"),
        (("-score > 1", #Predicate { -$0.score > 1 }), "UnaryMinus"),
        {
            let nan = Double.nan; return (("(ratio ?? .nan) == 1.5", #Predicate { ($0.ratio ?? nan) == 1.5 }), "nan")
        }(),
    ]

    /// The database with the records, some rows as another program writes them (UUIDs upper-cased).
    static func database(_ dir: TemporaryDirectory) throws -> (SharedDatabase, [Sample]) {
        let db = try SharedDatabase(path: dir.path("exact.db"), schema: sampleSchema)
        try db.insert(contentsOf: Samples.folders)
        try db.insert(contentsOf: Samples.records(count: 300))
        try db.write { tx in try tx.execute("UPDATE sample SET tag = upper(tag) WHERE id GLOB '*[13579]'") }
        #expect(try db.fetchAll("SELECT count(*) FROM sample WHERE tag GLOB '*ABCD*'")[0][0] != .integer(0))
        return (db, try db.fetch(RecordQuery<Sample>()))
    }

    /// Every predicate selects what Swift selects, through every way of asking.
    static func check(_ cases: [Case], in db: SharedDatabase, fetched: [Sample]) throws {
        let all = fetched.map(\.id)
        for (name, predicate) in cases {
            let expected = try fetched.filter { try predicate.evaluate($0) }.map(\.id)
            let query = RecordQuery(predicate)
            #expect(try db.fetch(query).map(\.id) == expected, "\(name): fetch")
            #expect(try db.count(query) == expected.count, "\(name): count")
            #expect(try db.ids(query) == expected, "\(name): ids")
            var deleted = -1, left: [String] = []
            _ = try? db.write { tx -> Void in
                deleted = try tx.delete(Sample.self, where: predicate)
                left = try tx.ids(RecordQuery<Sample>())
                throw TestFailure("rolled back")
            }
            #expect(deleted == expected.count && left == all.filter { !expected.contains($0) }, "\(name): delete(where:) deleted \(deleted)")
        }
    }

    @Test func textComparesAsSwiftStrings() throws {
        let dir = try TemporaryDirectory()
        let (db, fetched) = try Self.database(dir)
        #expect(Self.textCases.count > 400)
        try Self.check(Self.textCases, in: db, fetched: fetched)
    }

    @Test func numbersNaNAndOptionalsCompareAsInSwift() throws {
        let dir = try TemporaryDirectory()
        let (db, fetched) = try Self.database(dir)
        try Self.check(Self.numberCases, in: db, fetched: fetched)
    }

    @Test func datesCompareAsTheDatesAFetchReads() throws {
        let dir = try TemporaryDirectory()
        let (db, fetched) = try Self.database(dir)
        try Self.check(Self.dateCases(fetched), in: db, fetched: fetched)
    }

    @Test func enumsCompareByTheirOwnOrder() throws {
        let dir = try TemporaryDirectory()
        let (db, fetched) = try Self.database(dir)
        try Self.check(Self.enumCases, in: db, fetched: fetched)
    }

    @Test func uuidsAndJSONValuesCompareDecoded() throws {
        let dir = try TemporaryDirectory()
        let (db, fetched) = try Self.database(dir)
        try Self.check(Self.storedAsTextCases(fetched), in: db, fetched: fetched)
    }

    /// `==` with ASCII text stays SQLite's own unless the text holds one of the three ASCII
    /// characters that another character is canonically equivalent to: every scalar checked.
    @Test func onlyThreeCharactersEqualASCIIText() {
        var found: [UInt32] = []
        for value in UInt32(0x80)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            var ascii = true
            String(scalar)._withNFCCodeUnits { if $0 >= 0x80 { ascii = false } }
            if ascii { found.append(value) }
        }
        #expect(found == [0x37E, 0x1FEF, 0x212A])
        #expect(found.map { String(Unicode.Scalar($0)!) } == [";", "`", "K"])
        #expect(Set(found.map { String(Unicode.Scalar($0)!)._nfcCodeUnits[0] }) == TextEquality.asciiWithOtherSpellings)
    }

    /// Text of scalars below U+0300 is compared by its bytes: every such scalar, and every pair
    /// of them, is in NFC already (nothing decomposes, reorders or composes).
    @Test func scalarsBelowU0300AreInNFC() {
        let scalars = (UInt32(0)..<0x300).compactMap(Unicode.Scalar.init)
        var changed = 0
        for a in scalars {
            for b in scalars {
                let text = String(String.UnicodeScalarView([a, b]))
                if text._nfcCodeUnits != Array(text.utf8) { changed += 1 }
            }
        }
        #expect(changed == 0)
    }

    /// The functions with Swift's semantics answer Tandem's queries, and nothing stored in the
    /// file can use them (SQLITE_DIRECTONLY), so the `sqlite3` shell reads every object.
    @Test func swiftFunctionsStayOutOfStoredObjects() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("direct.db"), schema: sampleSchema)
        #expect(try db.fetchAll("SELECT tandem_string_equal('é', 'e\u{301}') AS same")[0]["same"] == .integer(1))
        try db.write { tx in try tx.execute("CREATE VIEW uses_swift AS SELECT tandem_string_equal('é', 'e\u{301}') AS same") }
        do {
            _ = try db.fetchAll("SELECT * FROM uses_swift")
            Issue.record("a view used a function registered from Swift")
        } catch let error as SQLiteError {
            #expect(error.message.contains("unsafe use of tandem_string_equal()"), "\(error)")
        }
    }

    @Test func untranslatablePredicatesAreEvaluatedInSwift() throws {
        let dir = try TemporaryDirectory()
        let (db, fetched) = try Self.database(dir)
        for ((name, predicate), spelling) in Self.fallbackCases {
            let expected = try fetched.filter { try predicate.evaluate($0) }.map(\.id)
            #expect(try db.fetch(RecordQuery(predicate)).map(\.id) == expected, "\(name): fetch")
            let message = "Sample: the predicate expression \(spelling) cannot be translated to SQL; count, ids and delete need an SQL predicate"
            #expect(throws: TandemError.invalidRecord(message)) { try db.count(RecordQuery(predicate)) }
            #expect(throws: TandemError.invalidRecord(message)) { try db.ids(RecordQuery(predicate)) }
            #expect(throws: TandemError.invalidRecord(message)) { try db.delete(Sample.self, where: predicate) }
        }
    }

    /// Sorts in SQL give `sorted(using:)`'s order: dates as a fetch reads them, UUIDs in either
    /// case, text in NFC. Swift's `<` is not a consistent order on other text (`"e\u{301}" <
    /// "éa"` and `"éa" < "e\u{301}"` are both false), so there SQL orders by the NFC forms,
    /// canonically equivalent text tying (and then by id, as Swift's stable sort keeps it).
    @Test func sortsGiveSwiftsOrder() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try Self.database(dir)
        // Another program's values: two seconds since 1970 that read as one Date (before 1985
        // they are finer than a Date), in the opposite order of their ids.
        try db.write { tx in
            try tx.execute("UPDATE sample SET at = ?, due = ? WHERE id = 's010'", [DatabaseValue.real(0.1.nextUp), .real(0.1.nextUp)])
            try tx.execute("UPDATE sample SET at = ?, due = ? WHERE id = 's020'", [DatabaseValue.real(0.1), .real(0.1)])
        }
        let fetched = try db.fetch(RecordQuery<Sample>())
        let isNFC = { (text: String) in Array(text.utf8) == text._nfcCodeUnits }
        let sorts: [(String, [SortDescriptor<Sample>])] = [
            ("at", [SortDescriptor(\.at)]), ("due reverse", [SortDescriptor(\.due, order: .reverse)]), ("tag", [SortDescriptor(\.tag)]),
            ("score, count", [SortDescriptor(\.score), SortDescriptor(\.count)]), ("size (its own order)", [SortDescriptor(\.size)]),
            ("title", [SortDescriptor(\.title)]), ("title reverse", [SortDescriptor(\.title, order: .reverse)]),
            ("title lexical", [SortDescriptor(\.title, comparator: .lexical)]), ("note", [SortDescriptor(\.note)]),
        ]
        let nfc = fetched.filter { isNFC($0.title) && ($0.note.map(isNFC) ?? true) }
        let nfcIDs = Set(nfc.map(\.id))
        #expect(nfc.count > 50 && nfc.count < fetched.count)
        for (name, sortBy) in sorts {
            let sorted = try db.fetch(RecordQuery(sortBy: sortBy)).map(\.id)
            #expect(sorted.filter(nfcIDs.contains) == nfc.sorted(using: sortBy).map(\.id), "\(name)")
            #expect(try db.ids(RecordQuery(sortBy: sortBy)) == sorted, "\(name): ids")
            #expect(try db.ids(RecordQuery(sortBy: sortBy, limit: 10, offset: 7)) == Array(sorted.dropFirst(7).prefix(10)), "\(name): a page of ids")
            #expect(try db.count(RecordQuery(sortBy: sortBy, limit: 10, offset: fetched.count - 4)) == 4, "\(name): count of the last page")
        }
        // A page whose last row ties with the next one as read.
        let byDate = fetched.sorted(using: [SortDescriptor(\.at)]).map(\.id)
        let tied = try #require(byDate.firstIndex(of: "s010"))
        #expect(byDate[tied + 1] == "s020")
        for (limit, offset) in [(tied + 1, 0), (1, tied), (2, tied), (3, tied + 1), (tied + 2, 0)] {
            let query = RecordQuery<Sample>(sortBy: [SortDescriptor(\.at)], limit: limit, offset: offset)
            #expect(try db.fetch(query).map(\.id) == Array(byDate.dropFirst(offset).prefix(limit)), "limit \(limit), offset \(offset)")
            #expect(try db.ids(query) == Array(byDate.dropFirst(offset).prefix(limit)), "ids, limit \(limit), offset \(offset)")
        }
        // Every record, text in any form: by the NFC forms, then by id.
        let byNFC = fetched.sorted { a, b in
            let (x, y) = (a.title._nfcCodeUnits, b.title._nfcCodeUnits)
            return x == y ? a.id < b.id : x.lexicographicallyPrecedes(y)
        }
        #expect(try db.fetch(RecordQuery<Sample>(sortBy: [SortDescriptor(\.title)])).map(\.id) == byNFC.map(\.id))
    }
}
