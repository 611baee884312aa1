import Foundation
import Testing
@testable import Tandem

/// A table's scope in the schema file and in record schemas: read, checked, named in errors.
@Suite struct TableScopeTests {
    private func schema(_ tables: String) throws -> Schema {
        try Schema(json: Data(#"{"tables":[\#(tables)]}"#.utf8))
    }

    @Test func scopesAreReadAndTheirParentReferenceIsFound() throws {
        let parsed = try schema(
            """
            {"name":"folders","columns":[{"name":"tenant","type":"text"}],"scope":{"column":"tenant"}},
            {"name":"notes","columns":[{"name":"folder_id","type":"text"}],"scope":{"parent":"folders"}},
            {"name":"tags","columns":[{"name":"owner","type":"text"}],"scope":{"parent":"folders","via":"owner"}},
            {"name":"settings","columns":[{"name":"value","type":"text"}]}
            """)
        #expect(parsed.table(named: "folders")?.scope == .column("tenant"))
        #expect(parsed.table(named: "notes")?.scope == .parent(table: "folders", via: "folder_id"))
        #expect(parsed.table(named: "tags")?.scope == .parent(table: "folders", via: "owner"))
        #expect(parsed.table(named: "settings")?.scope == nil)
        // Stored and read again, the schema is the same (a stored schema is compared on open).
        #expect(try Schema(json: parsed.jsonData()) == parsed)
    }

    @Test func wrongScopesAreRefusedNamingTheTable() {
        let cases: [(String, String)] = [
            (#"{"name":"t","columns":[{"name":"a","type":"text"}],"scope":{"column":"b"}}"#, "table 't': the scope column 'b' is not one of its columns"),
            (#"{"name":"t","columns":[{"name":"a","type":"real"}],"scope":{"column":"a"}}"#, "the scope column 'a' is real"),
            (#"{"name":"t","columns":[{"name":"a","type":"text"}],"localOnly":true,"scope":{"column":"a"}}"#, "table 't' is localOnly"),
            (#"{"name":"t","columns":[{"name":"a","type":"text"}],"scope":{"parent":"nope"}}"#, "its scope's parent 'nope' is not a declared table"),
            (
                #"{"name":"p","columns":[{"name":"a","type":"text"}]},{"name":"t","columns":[{"name":"p_id","type":"text"}],"scope":{"parent":"p"}}"#,
                "its scope's parent 'p' must be scoped by a column of its own"
            ),
            (
                #"{"name":"p","columns":[{"name":"a","type":"text"}],"scope":{"column":"a"}},{"name":"t","columns":[{"name":"x","type":"text"}],"scope":{"parent":"p"}}"#,
                "no text column 'p_id' names its scope's parent row"
            ),
            (#"{"name":"t","columns":[{"name":"a","type":"text"}],"scope":{"column":"a","via":"a"}}"#, "'via' goes with 'parent'"),
            (#"{"name":"t","columns":[{"name":"a","type":"text"}],"scope":{}}"#, "scope takes either 'column'"),
            (#"{"name":"t","columns":[{"name":"a","type":"text"}],"scope":{"column":"a","tenant":"x"}}"#, "unknown key 'tenant'"),
        ]
        for (tables, message) in cases {
            do {
                _ = try schema(tables)
                Issue.record("accepted: \(tables)")
            } catch {
                #expect("\(error)".contains(message), "\(tables): \(error)")
            }
        }
    }

    struct Folder: Record { var id = ""; var tenant: String }
    struct Note: Record { var id = ""; var title: String; var folder_id: String? }

    @Test func recordTablesTakeAScope() throws {
        let schema = try Schema(records: [
            RecordTable(Folder.self, scope: .column("tenant")),
            RecordTable(Note.self, scope: .parent(table: "folder", via: "")),
        ])
        #expect(schema.table(named: "note")?.scope == .parent(table: "folder", via: "folder_id"))
    }
}
