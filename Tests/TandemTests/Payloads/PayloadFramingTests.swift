import Foundation
import Testing
@testable import Tandem

/// `tandem import` reads an array or newline-delimited objects, from a file or standard input;
/// a payload that is not what it should be is refused naming where (the element, its line for
/// newline-delimited input), changing no file.
@Suite struct PayloadFramingTests {
    let dir: TemporaryDirectory
    let db: SharedDatabase

    init() throws {
        dir = try TemporaryDirectory()
        db = try SharedDatabase(
            path: dir.path("f.db"),
            schema: Schema(tables: [
                TableSchema(name: "notes", columns: [.text("title"), .integer("done")])
            ]))
    }

    func file(_ bytes: [UInt8], _ name: String = "payload") throws -> String {
        let path = dir.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func fingerprint() throws -> [String] {
        try databaseFingerprint(db.path)
    }

    @Test func newlineDelimitedObjectsFromAFileOrStandardInput() throws {
        let lines = "{\"id\":\"a\",\"title\":\"A\"}\n\n{\"id\":\"b\",\"title\":\"B\",\"done\":true}\r\n  {\"id\":\"c\"}"
        let path = try file(Array(lines.utf8), "p.ndjson")
        let fromFile = try runTandem(["import", db.path, "notes", path, "--ndjson"])
        #expect(fromFile.status == 0 && fromFile.stdout == "notes: 3 inserted, 0 updated, 0 deleted, 0 unchanged", "\(fromFile.stderr)")
        #expect(fromFile.stderr.isEmpty, "no progress line off a terminal: \(fromFile.stderr)")
        // Standard input as a pipe and as a file, with `-` and without.
        for command in [
            "cat '\(path)' | '\(tandemBinary)' import '\(db.path)' notes - --ndjson",
            "'\(tandemBinary)' import '\(db.path)' notes --ndjson < '\(path)'",
        ] {
            let result = try runShell(command)
            #expect(result.status == 0 && result.stdout == "notes: 0 inserted, 0 updated, 0 deleted, 3 unchanged", "\(command): \(result.stderr)")
        }
        let array = try file(Array(#"[{"id":"a","title":"A2"}]"#.utf8), "p.json")
        let piped = try runShell("cat '\(array)' | '\(tandemBinary)' import '\(db.path)' notes --json")
        #expect(piped.status == 0 && piped.stdout == #"{"notes":{"inserted":0,"updated":1,"deleted":0,"unchanged":0}}"#, "\(piped.stderr)")
        #expect(piped.stderr.isEmpty)
    }

    @Test func aPayloadThatIsNotAnArrayOrObjectsIsRefusedNamingWhere() throws {
        _ = try runTandem(["import", db.path, "notes", try file(Array(#"[{"id":"a","title":"A"}]"#.utf8))])
        let before = try fingerprint()
        let invalidUTF8 = Array(#"[{"id":"x"},{"id":"y"},{"id":"z","title":""#.utf8) + [0xC3, 0x28] + Array(#""}]"#.utf8)
        let cases: [([UInt8], [String], String)] = [
            (Array("".utf8), [], "the payload is empty"),
            (Array("  \n".utf8), ["--ndjson"], "the payload is empty"),
            (Array(#"{"id":"x"}"#.utf8), [], "the payload must be a JSON array of objects (newline-delimited objects, one per line, are read as NDJSON: --ndjson)"),
            (Array(#"[{"id":"x"} {"id":"y"}]"#.utf8), [], "element [0] is followed by '{' instead of , or ]"),
            (Array(#"[{"id":"x"},]"#.utf8), [], "element [1] is not an object"),
            (Array(#"[{"id":"x"},"#.utf8), [], "the payload ends after the , that follows element [0]"),
            (Array(#"[{"id":"x"}"#.utf8), [], "the payload ends after element [0] without the ] that closes its array"),
            (Array(#"[{"id":"x"}] []"#.utf8), [], "the payload's array is followed by '['"),
            (Array(#"[{"id":"x"},{"id":"y","title":"open]"#.utf8), [], "the payload ends inside element [1]"),
            (Array(#"[{"id":"x"},{"id":"y","title":tru}]"#.utf8), [], "element [1] is not valid JSON: {\"id\":\"y\",\"title\":tru}"),
            (Array("[{\"id\":\"x\"},{\"id\":\"y\",\"title\":\"a\ttab\"}]".utf8), [], "element [1] is not valid JSON"),
            (invalidUTF8, [], "the payload is not UTF-8: element [2] holds bytes that are not"),
            (Array("{\"id\":\"x\"}\n\n[1]\n".utf8), ["--ndjson"], "element [1] (line 3) is not an object"),
            (
                Array("{\"id\":\"x\"}\n{\"id\":\"y\"}\n{\"id\":\"z\",\"done\":\"yes\"}\n".utf8), ["--ndjson"],
                "element [2] (line 3), key 'done': \"yes\" does not fit the integer column done"
            ),
            (Array("{\"id\":\"x\"}\n{\"id\":\"x\"}\n".utf8), ["--ndjson"], "element [1]: id 'x' appears twice in the payload"),
        ]
        for (bytes, extra, message) in cases {
            let result = try runTandem(["import", db.path, "notes", try file(bytes)] + extra)
            #expect(result.status == 1, "\(String(decoding: bytes, as: UTF8.self)): \(result.stdout)")
            #expect(result.stderr.contains(message), "\(String(decoding: bytes, as: UTF8.self)): \(result.stderr)")
        }
        #expect(try fingerprint() == before, "a refused payload changed the database files")
        // A byte order mark is read past.
        let marked = try runTandem(["import", db.path, "notes", try file([0xEF, 0xBB, 0xBF] + Array(#"[{"id":"a","title":"A"}]"#.utf8))])
        #expect(marked.status == 0 && marked.stdout.hasSuffix("1 unchanged"), "\(marked.stderr)")
    }

    /// Runs `/bin/sh -c command`; returns (status, stdout, stderr).
    func runShell(_ command: String) throws -> (status: Int32, stdout: String, stderr: String) {
        let shell = try Spawned(executable: "/bin/sh", ["-c", command])
        let status = try shell.wait()
        return (status, shell.output.joined(separator: "\n"), shell.stderr)
    }
}
