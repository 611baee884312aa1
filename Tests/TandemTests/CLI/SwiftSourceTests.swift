import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// `tandem schema --swift` over generated names (every Swift keyword, names that collide once
/// converted, random identifiers) compiles against the built Tandem module, and the program
/// built from it reads and writes every column of every table.
@Suite struct SwiftSourceTests {
    /// Every Swift keyword, reserved or contextual, but `true` and `false`, which no column can be
    /// named (SQLite cannot name a view's column so; the schema refuses them).
    static let keywords = """
        associatedtype borrowing class consuming deinit enum extension fileprivate func import init inout internal let
        nonisolated open operator package private precedencegroup protocol public rethrows static struct subscript typealias
        var break case catch continue default defer do else fallthrough for guard if in repeat return throw switch where while
        Any as await false is nil self Self super throws true try _ associativity async convenience didSet dynamic final get
        indirect infix lazy left mutating none nonmutating optional override postfix precedence prefix Protocol required right
        set some Type unowned weak willSet actor any each macro consume copy discard sending isolated then
        """.split(whereSeparator: \.isWhitespace).map(String.init).filter { !["true", "false"].contains($0) }

    /// Identifiers from a few words joined as snake_case, camelCase and PascalCase, some with
    /// leading, trailing or doubled underscores, so that many convert to the same Swift name.
    static func randomNames(count: Int, using random: inout SeededRandom) -> [String] {
        let words = ["created", "at", "url", "type", "self", "id", "data", "box", "item", "in", "x1", "default"]
        var names: [String] = []
        var lowered: Set<String> = ["id"]
        while names.count < count {
            let parts = (0..<Int.random(in: 1...3, using: &random)).map { _ in words.randomElement(using: &random)! }
            var name: String
            switch Int.random(in: 0...4, using: &random) {
            case 0: name = parts.joined(separator: "_")
            case 1: name = parts[0] + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
            case 2: name = parts.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
            case 3: name = "_" + parts.joined(separator: "__")
            default: name = parts.joined(separator: "_").uppercased() + "_"
            }
            if lowered.insert(name.lowercased()).inserted { names.append(name) }
        }
        return names
    }

    static func columns(_ names: [String]) -> [ColumnSchema] {
        names.enumerated().map { index, name in ColumnSchema(name: name, type: [.text, .integer, .real][index % 3]) }
    }

    /// A database of `tables` and `tandem schema --swift` of it: the source and its type names.
    func generate(_ tables: [TableSchema], in dir: TemporaryDirectory) throws -> (db: SharedDatabase, source: String, typeNames: [String]) {
        let db = try SharedDatabase(path: dir.path("names.db"), schema: Schema(tables: tables))
        let result = try tandem(["schema", db.path, "--swift"])
        #expect(result.status == 0, "\(result.stderr)")
        let typeNames = result.stdout.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("struct ") else { return nil }
            return String(line.dropFirst("struct ".count).prefix { $0 != ":" })
        }
        #expect(typeNames.count == tables.count && Set(typeNames).count == typeNames.count, "\(typeNames)")
        try result.stdout.write(toFile: dir.path("Records.swift"), atomically: true, encoding: .utf8)
        return (db, result.stdout, typeNames)
    }

    /// `swiftc` (one job) on `files` against the built Tandem module: a type check, or a program
    /// linked with Tandem's objects. Returns the errors, or nil.
    func compile(_ files: [String], output: String? = nil) throws -> String? {
        let build = URL(fileURLWithPath: tandemBinary).deletingLastPathComponent()
        var arguments =
            [
                "swiftc", "-swift-version", "6", "-j", "1", "-I", build.appendingPathComponent("Modules").path,
                "-I", packageRoot.appendingPathComponent("Sources/CSQLite").path,
                "-I", packageRoot.appendingPathComponent("Sources/CCrypto").path,
            ] + files
        if let output {
            arguments += try FileManager.default.contentsOfDirectory(atPath: build.appendingPathComponent("Tandem.build").path)
                .filter { $0.hasSuffix(".o") }.map { build.appendingPathComponent("Tandem.build/\($0)").path }
            arguments += ["-lsqlite3", "-o", output]
        } else {
            arguments.append("-typecheck")
        }
        let compiler = try Spawned(executable: "/usr/bin/env", arguments)
        guard try compiler.wait(timeout: 120) != 0 else { return nil }
        return compiler.stderr.split(separator: "\n").filter { $0.contains("error") }.prefix(20).joined(separator: "\n")
    }

    @Test func everyKeywordAndTroublesomeNameAsATableTypeChecks() throws {
        let names =
            [
                "notes", "note", "todo_items", "todoItems", "categories", "boxes", "status", "strings", "data", "records", "types",
                "_", "__", "Items", "news", "true", "False",
            ] + Self.keywords
        var lowered: Set<String> = []
        let tables = names.filter { lowered.insert($0.lowercased()).inserted }.map { TableSchema(name: $0, columns: Self.columns(["value", "Value_2"])) }
        let dir = try TemporaryDirectory()
        let (_, _, typeNames) = try generate(tables, in: dir)
        for name in [
            "Note", "Note2", "TodoItem", "TodoItems", "Category", "Box", "Status", "StringRecord", "DataRecord", "RecordRecord",
            "TypeRecord", "SelfRecord", "Unnamed", "Unnamed2", "Typealias", "As", "News", "AnyRecord", "ProtocolRecord",
        ] {
            #expect(typeNames.contains(name), "no struct \(name) in \(typeNames)")
        }
        let errors = try compile([dir.path("Records.swift")])
        #expect(errors == nil, "the generated Swift does not compile:\n\(errors ?? "")")
    }

    @Test func columnsOfEveryNameReadAndWriteThroughTheGeneratedTypes() throws {
        var random = SeededRandom(seed: 0x5_1f7)
        // The keywords as columns, in as many tables as it takes (at most 60 columns each, no
        // two differing only in case: `self` and `Self`).
        var keywordTables: [[String]] = []
        for keyword in Self.keywords {
            if let index = keywordTables.firstIndex(where: { $0.count < 60 && !$0.contains { $0.lowercased() == keyword.lowercased() } }) {
                keywordTables[index].append(keyword)
            } else {
                keywordTables.append([keyword])
            }
        }
        let tables =
            [
                TableSchema(name: "notes", columns: Self.columns(["default", "self", "in", "var", "Type", "_", "__", "created_at", "createdAt", "_id", "i_d", "URL"])),
                TableSchema(name: "generated", columns: Self.columns(Self.randomNames(count: 60, using: &random))),
            ] + keywordTables.enumerated().map { TableSchema(name: "keywords_\($0.offset)", columns: Self.columns($0.element)) }
        let dir = try TemporaryDirectory()
        let (db, source, typeNames) = try generate(tables, in: dir)
        for declaration in ["var createdAt: ", "var created_at: ", "var `default`: ", "var type: ", "var url: ", "var `_`: ", "case type = \"Type\""] {
            #expect(source.contains("    " + declaration) || source.contains("        " + declaration), "no `\(declaration)`")
        }
        // A row in every column of every table, read by the generated types and written back
        // under another id: the copy must hold the same values.
        try db.write { tx in
            for table in tables {
                let names = ["id"] + table.columns.map(\.name)
                let values: [DatabaseValue] =
                    [.text("original")]
                    + table.columns.enumerated().map { index, column in
                        switch column.type {
                        case .text: .text("t\(index)");
                        case .integer: .integer(Int64(index));
                        case .real: .real(Double(index) + 0.5)
                        }
                    }
                try tx.execute(
                    "INSERT INTO \(SQLText.identifier(table.name))(\(names.map(SQLText.identifier).joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))",
                    values)
            }
        }
        let program = """
            import Tandem

            func copy<R: Record>(_ type: R.Type, in db: SharedDatabase) throws {
                let records = try db.fetch(RecordQuery<R>())
                guard records.count == 1 else { fatalError("\\(R.self): \\(records.count) records") }
                try db.write { tx in for var record in records { record.id = "copy"; _ = try tx.insert(record) } }
            }

            let db = try SharedDatabase(path: CommandLine.arguments[1])
            \(typeNames.map { "try copy(\($0).self, in: db)" }.joined(separator: "\n"))
            print("copied")

            """
        try program.write(toFile: dir.path("main.swift"), atomically: true, encoding: .utf8)
        let errors = try compile([dir.path("Records.swift"), dir.path("main.swift")], output: dir.path("records-check"))
        #expect(errors == nil, "the generated Swift does not compile:\n\(errors ?? "")")
        let run = try Spawned(executable: dir.path("records-check"), [db.path])
        #expect(try run.wait() == 0 && run.output == ["copied"], "\(run.stderr)")
        for table in tables {
            let rows = try db.fetchAll("SELECT * FROM \(SQLText.identifier(table.name)) ORDER BY id = 'copy'")
            #expect(
                rows.count == 2 && Array(rows[0].values.dropFirst()) == Array(rows[1].values.dropFirst()),
                "\(table.name): \(rows.map { Array($0.values) })")
        }
    }

    @Test func namesAreSingularCamelCaseAndCollisionFree() {
        #expect(
            ["notes", "todo_items", "categories", "boxes", "matches", "addresses", "status", "analysis", "news_items", "person"]
                .map { SwiftRecordSource.singular(SwiftRecordSource.upperCamel($0)) }
                == ["Note", "TodoItem", "Category", "Box", "Match", "Address", "Status", "Analysis", "NewsItem", "Person"])
        #expect(
            ["created_at", "Type", "URL", "_private", "_", "a__b", "createdAt", "x1_y"].map(SwiftRecordSource.lowerCamel)
                == ["createdAt", "type", "url", "_private", "_", "aB", "createdAt", "x1Y"])
        for name in ["true", "False", "TRUE"] {
            #expect(
                throws: TandemError.invalidSchema(
                    SchemaProblem(
                        .invalidName, table: "t", column: name, "column 't.\(name)': SQLite cannot name a view's column '\(name)' (it reads the word as a boolean); rename it"))
            ) {
                try Schema(tables: [TableSchema(name: "t", columns: [.text(name)])]).validate()
            }
        }
        var taken: Set<String> = []
        #expect(["a", "a", "a"].map { SwiftRecordSource.unique([$0], taken: &taken, reserved: []) } == ["a", "a2", "a3"])
    }
}
