import Foundation
import Testing
@testable import Tandem

/// A refused schema says what is wrong as data (``SchemaProblem``): its kind, the table and the
/// column at fault. Each rule is broken with generated names, declared in Swift and in JSON.
@Suite struct SchemaProblemTests {
    struct Case {
        var name: String
        var schema: Schema
        var kind: SchemaProblem.Kind
        var table: String?
        var column: String?
    }

    /// A name the rules accept: a letter or `_`, then letters, digits and `_`, never a reserved
    /// prefix, `id`, `true` or `false`.
    static func name(_ random: inout SystemRandomNumberGenerator, _ prefix: String) -> String {
        let tail = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
        return prefix + String((0..<Int.random(in: 1...12, using: &random)).map { _ in tail.randomElement(using: &random)! })
    }

    static func cases(_ random: inout SystemRandomNumberGenerator) -> [Case] {
        let t = name(&random, "t"), u = name(&random, "u"), c = name(&random, "c"), d = name(&random, "d")
        let table = { (columns: [ColumnSchema]) in TableSchema(name: t, columns: columns) }
        return [
            Case(name: "a table declared twice", schema: Schema(tables: [table([.text(c)]), table([.text(d)])]), kind: .duplicate, table: t),
            Case(name: "a table with no columns", schema: Schema(tables: [table([])]), kind: .invalidTable, table: t),
            Case(
                name: "a table with too many columns", schema: Schema(tables: [table((0...Schema.maximumColumns).map { .text("\(c)_\($0)") })]),
                kind: .invalidTable, table: t),
            Case(
                name: "local-only and insert-only", schema: Schema(tables: [TableSchema(name: t, columns: [.text(c)], localOnly: true, insertOnly: true)]),
                kind: .invalidTable, table: t),
            Case(name: "id declared", schema: Schema(tables: [table([.text(c), .integer("ID")])]), kind: .invalidTable, table: t, column: "ID"),
            Case(name: "a column SQLite names as a boolean", schema: Schema(tables: [table([.text("True")])]), kind: .invalidName, table: t, column: "True"),
            Case(name: "a column declared twice", schema: Schema(tables: [table([.text(c), .real(c.uppercased())])]), kind: .duplicate, table: t, column: c.uppercased()),
            Case(name: "a column name starting with a digit", schema: Schema(tables: [table([.text("9" + c)])]), kind: .invalidName, table: t, column: "9" + c),
            Case(name: "a reserved table prefix", schema: Schema(tables: [TableSchema(name: "ps_" + t, columns: [.text(c)])]), kind: .invalidName, table: "ps_" + t),
            Case(
                name: "an index of an unknown column",
                schema: Schema(tables: [TableSchema(name: t, columns: [.text(c)], indexes: [IndexSchema(name: "i", columns: [d])])]), kind: .unknownColumn,
                table: t, column: d),
            Case(
                name: "a scope column that is not a column", schema: Schema(tables: [TableSchema(name: t, columns: [.text(c)], scope: .column(d))]),
                kind: .unknownColumn, table: t, column: d),
            Case(
                name: "a real scope column", schema: Schema(tables: [TableSchema(name: t, columns: [.real(c)], scope: .column(c))]), kind: .invalidScope,
                table: t, column: c),
            Case(
                name: "a scope's parent that is not declared",
                schema: Schema(tables: [TableSchema(name: t, columns: [.text(c)], scope: .parent(table: u, via: c))]), kind: .unknownTable, table: t),
        ]
    }

    @Test(arguments: 1...3) func eachRuleSaysItsKindTableAndColumn(seed: Int) throws {
        var random = SystemRandomNumberGenerator()
        for rule in Self.cases(&random) {
            do {
                try rule.schema.validate()
                Issue.record("\(rule.name): accepted")
            } catch TandemError.invalidSchema(let problem) {
                #expect(problem.kind == rule.kind, "\(rule.name): \(problem)")
                #expect(problem.table == rule.table, "\(rule.name): \(problem)")
                #expect(problem.column == rule.column, "\(rule.name): \(problem)")
                let error = TandemError.invalidSchema(problem)
                #expect(error.table == rule.table && error.column == rule.column, "\(rule.name): the error's own fields")
                #expect(error.description == "invalid schema: " + problem.message)
            }
        }
    }

    /// The same from JSON: a problem inside a table names the table, and the file where one was read.
    @Test func aSchemaFilesProblemsNameTheTableAndColumn() throws {
        let dir = try TemporaryDirectory()
        let samples: [(json: String, kind: SchemaProblem.Kind, table: String?, column: String?)] = [
            (#"{"tables":[{"name":"notes","columns":[{"name":"body","type":"blob"}]}]}"#, .unknownType, "notes", "body"),
            (#"{"tables":[{"name":"notes","columns":[{"name":"body","type":"text"}],"localonly":true}]}"#, .unknownKey, "notes", nil),
            (#"{"tables":[{"name":"notes","columns":[{"name":"body","type":"text"},{"name":"Body","type":"text"}]}]}"#, .duplicate, "notes", "Body"),
            (#"{"tables":[{"name":"notes","columns":[]}]}"#, .invalidTable, "notes", nil),
            (#"{"tables":[{"name":"notes","name":"other","columns":[]}]}"#, .malformed, nil, nil),
            (#"{"tables": 3}"#, .malformed, nil, nil),
        ]
        for (index, sample) in samples.enumerated() {
            let path = dir.path("schema\(index).json")
            try Data(sample.json.utf8).write(to: URL(fileURLWithPath: path))
            do {
                _ = try Schema(contentsOf: URL(fileURLWithPath: path))
                Issue.record("\(sample.json): accepted")
            } catch TandemError.invalidSchema(let problem) {
                #expect(problem.kind == sample.kind && problem.table == sample.table && problem.column == sample.column, "\(sample.json): \(problem)")
                #expect(problem.message.hasPrefix(path + ": "), "the file is named: \(problem.message)")
            }
        }
    }

    /// A payload for a table the schema does not declare, and a scope column that is not one.
    @Test func anImportNamesTheTableAndColumnItCannotFind() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        #expect(throws: TandemError.invalidSchema(SchemaProblem(.unknownTable, table: "nope", "'nope' is not a declared table (declared: notes)"))) {
            try db.importJSON(Data("[]".utf8), into: "nope")
        }
    }
}
