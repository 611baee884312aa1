import Foundation
import Testing
@testable import Tandem

/// Where imported keys go: `--map` to a column that does not exist, two keys for one column or
/// the id, a key twice in one JSON object (payloads, schema files, SQL arguments), a nested
/// child naming another parent: each refused naming the key, changing no file. `--map K=id`
/// maps the id.
@Suite struct ImportKeyTests {
    static let schema = Schema(tables: [
        TableSchema(name: "notes", columns: [.text("title"), .integer("done"), .real("score"), .real("created_at")]),
        TableSchema(name: "items", columns: [.text("label"), .text("note_id")]),
    ])
    let dir: TemporaryDirectory
    let db: SharedDatabase

    init() throws {
        dir = try TemporaryDirectory()
        db = try SharedDatabase(path: dir.path("k.db"), schema: Self.schema)
    }

    func importing(_ json: String, _ extra: [String] = [], table: String = "notes") throws -> (status: Int32, stdout: String, stderr: String) {
        let file = dir.path("payload.json")
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        return try runTandem(["import", db.path, table, file] + extra)
    }

    func fingerprint() throws -> [String] {
        try databaseFingerprint(db.path)
    }

    /// Runs `body`, expecting exit 1 with `message` on stderr and the database files unchanged.
    func expectRefused(_ what: String, status: Int32 = 1, _ message: String, _ body: () throws -> (status: Int32, stdout: String, stderr: String)) throws {
        let before = try fingerprint()
        let result = try body()
        #expect(result.status == status, "\(what): exit \(result.status), \(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains(message), "\(what): \(result.stderr)")
        #expect(try fingerprint() == before, "\(what) changed the database files")
    }

    @Test func aMapToNoColumnIsRefusedAndAMapToIDMapsTheID() throws {
        _ = try importing(#"[{"id":"a","title":"A"}]"#)
        try expectRefused("--map nm=nonexistent", "the key map nm=nonexistent names no column: notes has no column 'nonexistent' (its columns: id, title, done, score, created_at)")
        {
            try importing(#"[{"id":"b","nm":"x"}]"#, ["--map", "nm=nonexistent"])
        }
        try expectRefused("a map unused by the payload", "no column") { try importing(#"[{"id":"b"}]"#, ["--map", "nm=nonexistent"]) }
        try expectRefused("a key mapped twice", status: 2, "--map nm is given twice (nm=title and nm=done)") {
            try importing(#"[{"id":"b"}]"#, ["--map", "nm=title", "--map", "nm=done"])
        }
        try expectRefused("a key both mapped and nested", "the key 'items' is both mapped (to title) and nested (into items)") {
            try importing(#"[{"id":"b"}]"#, ["--map", "items=title", "--nested", "items=items"])
        }
        let mapped = try importing(#"[{"key":"b","title":"B"},{"key":7,"title":"seven"}]"#, ["--map", "key=id"])
        #expect(mapped.status == 0, "\(mapped.stderr)")
        #expect(try db.fetchAll("SELECT id, title FROM notes ORDER BY id").map { "\($0[0].stringValue!)=\($0[1].stringValue!)" } == ["7=seven", "a=A", "b=B"])
        // The payload's own `id` key can go elsewhere while another key is the id.
        let swapped = try importing(#"[{"key":"c","id":"legacy","title":"C"}]"#, ["--map", "key=id", "--map", "id=title"])
        #expect(swapped.status == 1 && swapped.stderr.contains("the keys 'id' and 'title' both go to column title"), "\(swapped.stderr)")
        let legacy = try importing(#"[{"key":"c","id":"legacy"}]"#, ["--map", "key=id", "--map", "id=title"])
        #expect(legacy.status == 0, "\(legacy.stderr)")
        #expect(try db.fetchAll("SELECT title FROM notes WHERE id = 'c'").first?[0] == .text("legacy"))
        try expectRefused("no key for the mapped id", "element [0] has no id (a non-empty text or an integer under the key 'key')") {
            try importing(#"[{"key":"","title":"x"}]"#, ["--map", "key=id"])
        }
    }

    @Test func twoKeysForOneColumnOrTheIDAreRefusedNamingBoth() throws {
        // Every spelling that reaches a column (its name, its convention, a mapped alias), in
        // every pair within one element; each alone is accepted.
        let spellings: [(place: String, keys: [String])] = [
            ("column created_at", ["alias", "createdAt", "created_at"]),
            ("column title", ["alias", "title"]),
            ("the id", ["alias", "id"]),
        ]
        for (place, keys) in spellings {
            let map = ["--map", "alias=" + (place == "the id" ? "id" : String(place.split(separator: " ").last!))]
            for key in keys {
                let id = key == "id" || (key == "alias" && place == "the id") ? "" : #""id":"solo","#
                let alone = try importing("[{\(id)\"\(key)\":\(place == "column title" || place == "the id" ? "\"solo\"" : "1.5")}]", map)
                #expect(alone.status == 0, "\(key) alone for \(place): \(alone.stderr)")
            }
            for (i, first) in keys.enumerated() {
                for second in keys[(i + 1)...] {
                    let value = place == "column created_at" ? "1.5" : "\"x\""
                    let id = place == "the id" ? "" : #""id":"pair","#
                    try expectRefused("\(first)+\(second)", "element [0]: the keys '\(first)' and '\(second)' both go to \(place)") {
                        try importing("[{\(id)\"\(first)\":\(value),\"\(second)\":\(value)}]", map)
                    }
                }
            }
        }
    }

    @Test func aKeyTwiceInOneObjectIsRefusedWherePayloadsSchemasAndArgumentsAreRead() throws {
        _ = try importing(#"[{"id":"a","title":"A"}]"#)
        // The same key spelled the same, through an escape, and canonically equal.
        for (payload, key, place) in [
            (#"[{"id":"a","title":"x","title":"y"}]"#, "title", "[0]"),
            (#"[{"id":"b"},{"id":"a","t\u0069tle":"x","title":"y"}]"#, "title", "[1]"),
            ("[{\"id\":\"a\",\"caf\u{e9}\":1,\"cafe\u{301}\":2}]", "caf\u{e9}", "[0]"),
            (#"[{"id":"a","items":[{"id":"i","label":"p","label":"q"}]}]"#, "label", "[0].items[0]"),
            (#"[{"id":"a","id":"b"}]"#, "id", "[0]"),
        ] {
            try expectRefused(payload, "the key '\(key)' appears twice in the object at \(place)") {
                try importing(payload, ["--nested", "items=items"])
            }
        }
        try expectRefused("--args-json", "the key 'a' appears twice in the object at [1]") {
            try runTandem(["exec", db.path, "UPDATE notes SET title = ? WHERE id = ?", "--args-json", #"["a", {"a":1,"a":2}]"#])
        }
        // Schema files: every key of every object given twice, each refused naming it and where;
        // no database file is made.
        let schemaText = String(decoding: Self.schema.jsonData(), as: UTF8.self)
        let variants = duplicating(try JSONValue(parsing: schemaText), path: "")
        #expect(variants.count > 15, "the schema has \(variants.count) keys")
        for (path, key, text) in variants {
            let file = dir.path("dup.json")
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let target = dir.path("new.db")
            let result = try runTandem(["init", target, "--schema", file])
            let place = path.isEmpty ? "the top-level object" : "the object at \(path)"
            #expect(result.status == 1 && result.stderr.contains("the key '\(key)' appears twice in \(place)"), "\(text): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: target), "a refused init created \(target)")
        }
    }

    @Test func aNestedChildNamingAnotherParentIsRefused() throws {
        try expectRefused("noteId of another parent", "element [0].items[0], key 'noteId': \"n2\" is not the id of the element it is nested in ('n1')") {
            try importing(#"[{"id":"n1","items":[{"id":"i1","noteId":"n2"}]}]"#, ["--nested", "items=items"])
        }
        let same = try importing(#"[{"id":"n1","items":[{"id":"i1","noteId":"n1","label":"x"}]}]"#, ["--nested", "items=items"])
        #expect(same.status == 0, "\(same.stderr)")
        try expectRefused("a mapped key for the parent's column only", "element [0].items[0], key 'heading': it is mapped to title, which is not a column of items") {
            try importing(#"[{"id":"n1","heading":"h","items":[{"id":"i1","heading":"x"}]}]"#, ["--nested", "items=items", "--map", "heading=title"])
        }
    }

    /// The value as JSON text once per key of each object, with that key (and its value) twice.
    func duplicating(_ value: JSONValue, path: String) -> [(path: String, key: String, text: String)] {
        switch value {
        case .object(let members):
            var result: [(String, String, String)] = []
            let keys = members.keys.sorted()
            for key in keys {
                let pairs = (keys + [key]).map { "\(JSONValue.string($0).jsonText):\(members[$0]!.jsonText)" }
                result.append((path, key, "{" + pairs.joined(separator: ",") + "}"))
            }
            for key in keys {
                for (inner, innerKey, text) in duplicating(members[key]!, path: path.isEmpty ? key : path + "." + key) {
                    let pairs = keys.map { "\(JSONValue.string($0).jsonText):\($0 == key ? text : members[$0]!.jsonText)" }
                    result.append((inner, innerKey, "{" + pairs.joined(separator: ",") + "}"))
                }
            }
            return result
        case .array(let elements):
            var result: [(String, String, String)] = []
            for (index, element) in elements.enumerated() {
                for (inner, innerKey, text) in duplicating(element, path: path + "[\(index)]") {
                    let parts = elements.enumerated().map { $0.offset == index ? text : $0.element.jsonText }
                    result.append((inner, innerKey, "[" + parts.joined(separator: ",") + "]"))
                }
            }
            return result
        default:
            return []
        }
    }
}
