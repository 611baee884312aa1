import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// A column type change rolled through a fleet on a real PostgreSQL server: setup converts the
/// server's column by the rule a host's migration converts with, so a migrated host and the
/// server agree on every value; a host on the old release keeps syncing, its uploads converted on
/// the way in or refused, named; a server value that does not convert refuses the setup.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct RollingTypeChangeTests {
    static let v1 = Schema(tables: [TableSchema(name: "notes", columns: [.text("n"), .real("r"), .integer("k")])])
    static let retype = Migration(
        "retype", uploads: .none,
        steps: [
            .changeType(table: "notes", column: "n", to: .integer), .changeType(table: "notes", column: "r", to: .text),
            .changeType(table: "notes", column: "k", to: .real),
        ])
    static let v2 = Schema(tables: [TableSchema(name: "notes", columns: [.integer("n"), .text("r"), .real("k")])], migrations: [retype])

    /// Values each side converts: text SQLite reads as an integer, reals that 15 digits write
    /// exactly, integers a double holds; NULL.
    static let texts: [String?] = ["12", " 7 ", "007", "1e3", "-0", "+5", "12.0", "9223372036854775807", "-9223372036854775808", nil]
    static let reals: [Double?] = [2.0, -0.0, 0.1, 1e16, 2.5e-7, 123456.789, -1.5, 0.0, 1e300, nil]
    static let ints: [Int64?] = [3, -5, 9_007_199_254_740_992, 0, nil, -9_007_199_254_740_992, 1, 2, 42, nil]

    func values(_ path: String, schema: Schema, _ sql: String = "SELECT id, n, r, k FROM notes ORDER BY id") throws -> [[DatabaseValue]] {
        let db = try SharedDatabase(path: path, schema: schema)
        defer { db.close() }
        return try db.fetchAll(sql).map(\.values)
    }

    @Test func aTypeChangeRollsThroughTheFleetWithBothVersionsSyncing() throws {
        let url = try TestPostgres.database(schema: Self.v1)
        let dir = try TemporaryDirectory()
        let (a, b) = (dir.path("a.db"), dir.path("b.db"))
        do {
            let db = try SharedDatabase(path: a, schema: Self.v1)
            for i in Self.texts.indices {
                try db.execute(
                    "INSERT INTO notes(id, n, r, k) VALUES (?, ?, ?, ?)",
                    [
                        "r\(i)", Self.texts[i].map { DatabaseValue.text($0) } ?? .null, Self.reals[i].map { DatabaseValue.real($0) } ?? .null,
                        Self.ints[i].map { DatabaseValue.integer($0) } ?? .null,
                    ])
            }
            db.close()
        }
        try SharedDatabase(path: b, schema: Self.v1).close()
        try RollingDrops.sync([a, b], url: url)

        // 1. Setup converts the server's columns; b migrates; the two agree on every value.
        let v2File = try dir.schemaFile(Self.v2, name: "v2.json")
        let expand = try tandem(["backend", "setup", url, "--schema", v2File])
        #expect(expand.status == 0, "\(expand.stderr)")
        let psql = try PostgresConnection(url)
        #expect(try PostgresSetup.existingColumns(of: "notes", on: psql) == ["id": "text", "n": "bigint", "r": "text", "k": "double precision"])
        let migrated = try values(b, schema: Self.v2)
        #expect(migrated.map { $0[1] } == [12, 7, 7, 1000, 0, 5, 12, .max, .min].map { DatabaseValue.integer($0) } + [.null])
        #expect(migrated.map { $0[2] } == ["2.0", "-0.0", "0.1", "1.0e+16", "2.5e-07", "123456.789", "-1.5", "0.0", "1.0e+300"].map { DatabaseValue.text($0) } + [.null])
        #expect(migrated.map { $0[3] } == Self.ints.map { $0.map { DatabaseValue.real(Double($0)) } ?? .null })
        let verify = try tandem(["verify", b, "--backend", url])
        #expect(verify.status == 0, "a migrated host holds what the server holds: \(verify.stdout) \(verify.stderr)")

        // 2. Both releases edit and sync; each reads every edit through its own column's type.
        do {
            let oldA = try SharedDatabase(path: a, schema: Self.v1)
            try oldA.execute("UPDATE notes SET n = '42', r = 3.25, k = 7 WHERE id = 'r0'")
            oldA.close()
            let newB = try SharedDatabase(path: b, schema: Self.v2)
            try newB.execute("UPDATE notes SET n = 11, r = '3.5', k = 0.5 WHERE id = 'r1'")
            newB.close()
        }
        try RollingDrops.sync([a, b, a], url: url)
        let onB = try values(b, schema: Self.v2, "SELECT id, n, r, k FROM notes WHERE id IN ('r0', 'r1') ORDER BY id")
        #expect(onB == [[.text("r0"), .integer(42), .text("3.25"), .real(7)], [.text("r1"), .integer(11), .text("3.5"), .real(0.5)]])
        let onA = try values(a, schema: Self.v1, "SELECT id, n, r, k FROM notes WHERE id IN ('r0', 'r1') ORDER BY id")
        // The old host reads 0.5 through its integer column's cast (0) until it migrates; what it
        // stores is the server's value.
        #expect(onA == [[.text("r0"), .text("42"), .real(3.25), .integer(7)], [.text("r1"), .text("11"), .real(3.5), .integer(0)]])
        #expect(try tandem(["verify", b, "--backend", url]).status == 0)
        let oldVerify = try tandem(["verify", a, "--backend", url])
        #expect(oldVerify.status != 0 && oldVerify.stderr.contains("the server's table notes does not match this host's schema"), "\(oldVerify.stderr)")

        // 3. An old host's value that does not convert is set aside, naming the column.
        do {
            let oldA = try SharedDatabase(path: a, schema: Self.v1)
            try oldA.execute("UPDATE notes SET n = 'twelve' WHERE id = 'r2'")
            oldA.close()
        }
        let refused = try tandem(["sync", a, "--backend", url])
        #expect(refused.status != 0 && refused.stderr.contains("column n: \"twelve\" does not convert to the server's bigint column exactly"), "\(refused.stderr)")
        let oldA = try SharedDatabase(path: a, schema: Self.v1)
        defer { oldA.close() }
        #expect(try oldA.uploadQueue.rejected().count == 1)
        #expect(try psql.execute("SELECT n FROM notes WHERE id = 'r2'").first?.first == "7")
        oldA.close()

        // 4. a migrates, its refused edit set aside: every value is the server's.
        let newA = try values(a, schema: Self.v2, "SELECT id, n, r, k FROM notes WHERE id IN ('r0', 'r1', 'r2') ORDER BY id")
        #expect(newA == onB + [[.text("r2"), .integer(7), .text("0.1"), .real(9_007_199_254_740_992)]])
    }

    /// A server value that does not convert refuses the setup, naming its row, and changes nothing.
    @Test func aServerValueThatDoesNotConvertRefusesTheSetup() throws {
        let url = try TestPostgres.database(schema: Self.v1)
        let psql = try PostgresConnection(url)
        try psql.execute("INSERT INTO notes(id, n, r, k) VALUES ('fine', '1', 2, 3), ('bad', '1.5', 0.30000000000000004, 9007199254740993)")
        let dir = try TemporaryDirectory()
        let setup = try tandem(["backend", "setup", url, "--schema", try dir.schemaFile(Self.v2, name: "v2.json")])
        #expect(setup.status == 1, "\(setup.stderr)")
        #expect(
            setup.stderr.contains("table notes row 'bad': column n holds '1.5', which does not convert to bigint exactly as migration 'retype' changes its type"), "\(setup.stderr)"
        )
        #expect(try PostgresSetup.existingColumns(of: "notes", on: psql) == ["id": "text", "n": "text", "r": "double precision", "k": "bigint"])
        // Whatever the database sets for reals as text, a real that 15 digits do not write
        // exactly is refused, not rounded.
        let database = try psql.execute("SELECT current_database()").first?.first ?? nil
        try psql.execute("ALTER DATABASE \(SQLText.identifier(database ?? "")) SET extra_float_digits = 0")
        try psql.execute("UPDATE notes SET n = '2' WHERE id = 'bad'")
        let rounded = try tandem(["backend", "setup", url, "--schema", try dir.schemaFile(Self.v2, name: "v2.json")])
        #expect(rounded.status == 1 && rounded.stderr.contains("row 'bad': column r holds '0.30000000000000004'"), "\(rounded.stderr)")
        try psql.execute("UPDATE notes SET n = '1.5' WHERE id = 'bad'")
        for (column, fixed) in [("n", "'2'"), ("r", "0.5"), ("k", "4")] {
            try psql.execute("UPDATE notes SET \(column) = \(fixed) WHERE id = 'bad'")
            let again = try tandem(["backend", "setup", url, "--schema", try dir.schemaFile(Self.v2, name: "v2.json")])
            #expect((again.status == 0) == (column == "k"), "after fixing \(column): \(again.stderr)")
        }
    }

    /// Text converted to real: the server, a migrated host and an upload of the same text hold the
    /// same double, correctly rounded, for generated decimals (six-place coordinates, 15 to 17
    /// significant digits) and texts SQLite's own CAST rounds off by an ulp ('9091.409267').
    @Test func textToRealConvertsToTheSameDoubleEverywhere() throws {
        var generator = SystemRandomNumberGenerator()
        var texts = ["9091.409267", "683.24449535927846", "321.2623535716248", "-110.018459", " 2.5 ", "+0.1", ".5", "5.", "-0", "1e-7"]
        for _ in 0..<400 { texts.append(String(format: "%.6f", Double.random(in: -180...180, using: &generator))) }
        for _ in 0..<200 { texts.append(Double.random(in: -1e6...1e6, using: &generator).description) }
        let old = Schema(tables: [TableSchema(name: "notes", columns: [.text("k")])])
        let retype = Migration("k-real", uploads: .none, steps: [.changeType(table: "notes", column: "k", to: .real)])
        let new = Schema(tables: [TableSchema(name: "notes", columns: [.real("k")])], migrations: [retype])
        let url = try TestPostgres.database(schema: old)
        let dir = try TemporaryDirectory()
        let host = dir.path("host.db")
        do {
            let db = try SharedDatabase(path: host, schema: old)
            try db.write { tx in
                for (i, text) in texts.enumerated() { try tx.execute("INSERT INTO notes(id, k) VALUES (?, ?)", [String(format: "r%04d", i), text]) }
            }
            db.close()
        }
        try RollingDrops.sync([host], url: url)
        try PostgresBackend.setup(conninfo: url, schema: new)
        let db = try SharedDatabase(path: host, schema: new)
        let migrated = try db.fetchAll("SELECT k FROM notes ORDER BY id").map(\.values[0])
        db.close()
        for (text, value) in zip(texts, migrated) {
            let expected = Double(NumberText.trimmed(text))!
            #expect(value == .real(expected) && value.doubleValue?.bitPattern == expected.bitPattern, "\(text.debugDescription): \(value)")
            #expect(PostgresValues.numberText(text, as: .real).flatMap(Double.init)?.bitPattern == expected.bitPattern, "\(text.debugDescription) uploaded")
        }
        let verify = try tandem(["verify", host, "--backend", url])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
    }

    /// A pending upload's text converted to real by a host's migration is the same double as its
    /// stored value, correctly rounded.
    @Test func aPendingUploadConvertsAsTheStoredRowDoes() throws {
        let old = Schema(tables: [TableSchema(name: "notes", columns: [.text("k")])])
        let new = Schema(
            tables: [TableSchema(name: "notes", columns: [.real("k")])],
            migrations: [Migration("k-real", uploads: .none, steps: [.changeType(table: "notes", column: "k", to: .real)])])
        let dir = try TemporaryDirectory()
        let path = dir.path("pending.db")
        do {
            let db = try SharedDatabase(path: path, schema: old)
            try db.execute("INSERT INTO notes(id, k) VALUES ('r1', '9091.409267'), ('r2', ' 683.24449535927846 ')")
            db.close()
        }
        let db = try SharedDatabase(path: path, schema: new)
        defer { db.close() }
        let stored = try db.fetchAll("SELECT k FROM notes ORDER BY id").map { $0[0].doubleValue?.bitPattern }
        let pending = try db.read { try $0.fetchAll("SELECT data ->> '$.data.k' FROM ps_crud ORDER BY id") }.map { $0[0].doubleValue?.bitPattern }
        #expect(stored == [Double("9091.409267")!.bitPattern, Double("683.24449535927846")!.bitPattern])  // read at run time: correctly rounded
        #expect(pending == stored)
    }

    /// Texts an old host may upload into a column whose type changed to a number: converted
    /// exactly as a SQLite column of that type takes them, refused otherwise.
    @Test func textIntoANumberColumnConvertsAsSQLiteWouldOrIsRefused() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("rule.db"), schema: Self.v2)
        defer { db.close() }
        let samples = [
            "12", " 12 ", "\t007\n", "+5", "-0", "1e3", "12.0", "1.5", "0.1", "abc", "", " ", "1e", ".5", "5.", "0x10", "NaN", "inf", "1,5", "١٢",
            "9223372036854775807", "9223372036854775808", "-9223372036854775808", "9007199254740993.0", "9007199254740992.0", "123456789012345678.5",
            "0.30000000000000004", "1e308", "1e309", "-1e-320", "12\u{0}",
        ]
        for text in samples {
            for type in [ColumnSchema.ColumnType.integer, .real] {
                let column = ColumnSchema(name: type == .integer ? "n" : "k", type: type)
                let sqlite = try db.read { tx in try? StoredValue.of(.text(text), column: column, table: Self.v2.tables[0], on: tx.connection) }
                guard let server = PostgresValues.numberText(text, as: type) else { continue }
                // What the server takes, a host's own column takes too, as the same number.
                switch (sqlite, type) {
                case (.integer(let i)?, .integer): #expect(String(i) == server, "\(text.debugDescription) as integer")
                case (.real(let d)?, .real): #expect(d.bitPattern == Double(server)!.bitPattern, "\(text.debugDescription) as real")
                default: Issue.record("\(text.debugDescription) as \(type): the server takes \(server), a host's column \(String(describing: sqlite))")
                }
            }
        }
        #expect(PostgresValues.numberText(" 12 ", as: .integer) == "12" && PostgresValues.numberText("1e3", as: .real) == "1000.0")
        #expect(PostgresValues.numberText("1.5", as: .integer) == nil && PostgresValues.numberText("abc", as: .real) == nil)
    }
}
