import Foundation
import Testing
@testable import Tandem

/// The export writes each row from its stored JSON as the view shows it: for every value the
/// write paths store, and for rows other programs wrote (values of another type, a key twice, a
/// key missing, NULL data, bytes that are not UTF-8), which it reads through the view, the text
/// is byte for byte what the view's rows give.
@Suite struct ExportStreamingTests {
    static let schema = Schema(tables: [TableSchema(name: "v", columns: [.text("t"), .integer("i"), .real("r"), .text("created_at")])])

    /// The export as the view's rows spell it (the columns in order, values as ``JSONValue``
    /// writes them), the reference.
    static func reference(_ db: SharedDatabase, where filter: String? = nil, camel: Bool = false, lines: Bool = false) throws -> String {
        let columns = ["id", "t", "i", "r", "created_at"]
        let rows = try db.fetchAll("SELECT \(columns.joined(separator: ", ")) FROM v\(filter.map { " WHERE \($0)" } ?? "") ORDER BY id")
        let objects = rows.map { row in
            "{"
                + columns.enumerated().map { offset, column in
                    JSONValue.string(camel && column == "created_at" ? "createdAt" : column).jsonText + ":" + JSONValue(row[offset]).jsonText
                }.joined(separator: ",") + "}"
        }
        return lines ? objects.map { $0 + "\n" }.joined() : "[" + objects.joined(separator: ",") + "]\n"
    }

    static func export(_ db: SharedDatabase, where filter: String? = nil, keys: KeyStyle = .snake, format: PayloadFormat = .array) throws -> String {
        var data = Data()
        try db.exportJSON(table: "v", where: filter, keys: keys, format: format) { data.append(contentsOf: $0) }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func everyRowIsWrittenAsTheViewShowsIt() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("e.db"), schema: Self.schema)
        var elements: [JSONValue] = []
        for (n, value) in adversarialValues.enumerated() {
            var object: [String: JSONValue] = ["id": .string("a\(n)")]
            for (name, type) in [("t", ColumnSchema.ColumnType.text), ("i", .integer), ("r", .real)] where ColumnRule.stored(value.databaseValue, in: type) != nil {
                if case .string(let s) = value, type == .real, (try? ISO8601Timestamp.secondsSince1970(s)) != nil { continue }
                object[name] = value
            }
            elements.append(.object(object))
        }
        try db.importJSON(Data(JSONValue.array(elements).jsonText.utf8), into: "v")
        // Rows through the view's triggers (their 18-digit reals) and rows another program wrote
        // into the table's storage: values of other types, a key twice, keys missing, NULL data,
        // text that is not UTF-8, a key of another column spelled with an escape.
        try db.write { try $0.execute("INSERT INTO v(id, t, i, r) VALUES ('b1', 'x', 1, 0.1), ('b2', 'quote \" \\ \u{7f}', -5, 1e300), ('b3', NULL, NULL, -0.0)") }
        try sqlite(
            db.path,
            """
            INSERT INTO ps_data__v(id, data) VALUES
              ('c1', '{"t":12,"i":"7","r":3,"created_at":1.5}'),
              ('c2', '{"t":"first","t":"second","i":1}'),
              ('c3', '{}'),
              ('c4', NULL),
              ('c5', '{"t":"caf\\u00e9 \\u0000 \\/","i":9223372036854775807,"r":-0.0}'),
              ('c6', CAST(X'7b2274223a2261ff62222c2269223a327d' AS TEXT)),
              ('c7', '{"\\u0074":"escaped key","i":true,"r":1e999}'),
              ('c8', '{"t":"a","extra":{"nested":[1,2]},"r":2.50}'),
              ('c\"9', '[1,2]');
            """)
        #expect(try Self.export(db) == Self.reference(db))
        #expect(try Self.export(db, keys: .camel) == Self.reference(db, camel: true))
        #expect(try Self.export(db, format: .ndjson) == Self.reference(db, lines: true))
        #expect(try Self.export(db, where: "i IS NOT NULL AND id > 'b'") == Self.reference(db, where: "i IS NOT NULL AND id > 'b'"))
        // The Data form keeps its shape: the array without a newline after it.
        #expect(try String(decoding: db.exportJSON(table: "v"), as: UTF8.self) + "\n" == Self.reference(db))
    }

    @Test func progressCountsRowsAgainstTheTotal() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("p.db"), schema: Self.schema)
        try db.importJSON(Data(JSONValue.array((0..<3000).map { .object(["id": .string("r\($0)")]) }).jsonText.utf8), into: "v")
        var reports: [ExportProgress] = []
        let rows = try db.exportJSON(table: "v", progress: { reports.append($0) }) { _ in }
        #expect(rows == 3000)
        #expect(reports == [ExportProgress(rows: 1024, totalRows: 3000), ExportProgress(rows: 2048, totalRows: 3000), ExportProgress(rows: 3000, totalRows: 3000)])
        reports = []
        try db.exportJSON(table: "v", where: "id < 'r2'", progress: { reports.append($0) }) { _ in }
        #expect(reports.last == ExportProgress(rows: 1112, totalRows: nil))
    }
}
