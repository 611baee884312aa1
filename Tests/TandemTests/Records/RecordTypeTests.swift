import Foundation
import Testing
@testable import Tandem

/// An enum with associated values, stored as JSON text.
enum Shape: Codable, Hashable, Sendable {
    case circle(radius: Double)
    case square(Double)
    case none
}

/// A record with the Codable property types beyond the mapped ones.
struct Drawing: Record, Equatable {
    var id = ""
    var link: URL
    var mirror: URL?
    var price: Decimal
    var discount: Decimal?
    var shape: Shape
    var outline: Shape?
}

/// A value whose `init(from:)` refuses the placeholder Tandem lays types out with.
struct Positive: Codable, Sendable {
    var value: Int
    init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Int.self)
        guard value > 0 else { throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not positive")) }
    }
    func encode(to encoder: any Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(value) }
}

struct Strict2: Record {
    var id = ""
    var amount: Positive
}

/// A value that holds itself without an optional: it cannot be made at all.
indirect enum Chain: Codable, Sendable {
    case link(Chain)
    case end
}

struct Chained: Record {
    var id = ""
    var chain: Chain
}

enum Color: String, Codable, CaseIterable, Sendable { case red, green, blue }

struct Paint: Record {
    var id = ""
    var color: Color
}

/// Every Codable property type works or is refused naming the type and the property.
@Suite struct RecordTypeTests {
    static let drawings = [
        Drawing(
            id: "d1", link: URL(string: "https://example.com/a%20b?q=1#f")!, mirror: nil, price: Decimal(string: "19.99")!,
            discount: Decimal(string: "-0.000000000000000000000000001")!, shape: .circle(radius: -0.0), outline: .square(2)),
        Drawing(
            id: "d2", link: URL(fileURLWithPath: "/tmp/é x"), mirror: URL(string: "mailto:a@b.c"), price: Decimal(string: "123456789012345678901234567890.5")!,
            discount: nil, shape: .none, outline: nil),
        Drawing(
            id: "d3", link: URL(string: "about:blank")!, mirror: URL(string: "https://example.com/a%20b?q=1#f"), price: Decimal(string: "19.990")!,
            discount: 0, shape: .square(2), outline: nil),
    ]

    @Test func urlsDecimalsAndEnumsWithAssociatedValuesAreStored() throws {
        let dir = try TemporaryDirectory()
        let schema = try Schema(records: [RecordTable(Drawing.self)])
        #expect(
            schema.table(named: "drawing")?.columns.map { "\($0.name):\($0.type.rawValue)" } == [
                "link:text", "mirror:text", "price:text", "discount:text", "shape:text", "outline:text",
            ])
        let db = try SharedDatabase(path: dir.path("drawing.db"), schema: schema)
        try db.insert(contentsOf: Self.drawings)
        let fetched = try db.fetch(RecordQuery<Drawing>())
        #expect(fetched == Self.drawings)
        let row = try #require(try db.fetchAll("SELECT link, price, shape FROM drawing WHERE id = 'd1'").first)
        #expect(row["link"] == .text("https://example.com/a%20b?q=1#f") && row["price"] == .text("19.99"), "\(row)")
        #expect(row["shape"] == .text(#"{"circle":{"radius":-0}}"#), "\(row)")

        let link = Self.drawings[0].link, price = Decimal(string: "19.99")!, square = Shape.square(2), none: Shape? = Shape.none
        let cases: [(String, Predicate<Drawing>)] = [
            ("link == d1's", #Predicate { $0.link == link }), ("price == 19.99", #Predicate { $0.price == price }),
            ("price < 19.99", #Predicate { $0.price < price }), ("price >= 19.99", #Predicate { $0.price >= price }),
            ("shape == square(2)", #Predicate { $0.shape == square }), ("!(outline == .none)", #Predicate { !($0.outline == none) }),
            ("discount == nil", #Predicate { $0.discount == nil }),
        ]
        for (name, predicate) in cases {
            let expected = try fetched.filter { try predicate.evaluate($0) }.map(\.id)
            #expect(try db.ids(RecordQuery(predicate)) == expected, "\(name)")
            #expect(try db.fetch(RecordQuery(predicate)).map(\.id) == expected, "\(name)")
        }
        #expect(try db.ids(RecordQuery(#Predicate<Drawing> { $0.price == price })) == ["d1", "d3"], "19.99 == 19.990")
    }

    @Test func typesThatCannotBeLaidOutAreNamedWithTheirProperty() throws {
        #expect(throws: TandemError.invalidRecord("Strict2.amount: Positive cannot be laid out as a column: its init(from:) failed on a placeholder value: not positive")) {
            try Schema(records: [RecordTable(Strict2.self)])
        }
        #expect(
            throws: TandemError.invalidRecord("Chained.chain: Chain cannot be laid out as a column: Chain nests values more than 32 levels deep (a type that contains itself?)")
        ) {
            try Schema(records: [RecordTable(Chained.self)])
        }
    }

    @Test func anUnknownRawValueNamesTableColumnAndRow() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("paint.db"), records: [RecordTable(Paint.self)])
        try db.insert(Paint(id: "p1", color: .red))
        try db.write { tx in try tx.execute("INSERT INTO paint(id, color) VALUES ('p2', 'purple')") }
        #expect(
            throws: TandemError.invalidValue(
                ValueRefusal(
                    table: "paint", column: "color", rowID: "p2",
                    message: "Paint.color (table paint, column color, row 'p2'): 'purple' is not a raw value of Color (its raw values: red, green, blue)"))
        ) {
            try db.fetch(RecordQuery<Paint>())
        }
    }

    @Test func aValueThatDoesNotEncodeNamesItsProperty() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("nested.db"), schema: sampleSchema)
        let bad = Sample(id: "x", title: "", count: 0, score: 0, at: Date(), size: .small, tags: [], part: Part(name: "", at: Date(), weight: .nan))
        do {
            try db.insert(bad)
            Issue.record("a NaN inside a JSON value was accepted")
        } catch TandemError.invalidRecord(let message) {
            #expect(message.hasPrefix("Sample.part: at weight: "), "\(message)")
        }
        #expect(try db.count(RecordQuery<Sample>()) == 0)
    }
}
