import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// Messages that say what happened, in the user's terms: a full disk blames the backup's
/// destination, an unreadable payload file says why, a payload that is JSON is not called
/// invalid JSON, and a set-aside upload is not said to stay queued.
@Suite struct CommandMessageTests {
    /// A tmpfs of `kilobytes` mounted on a new directory, or nil where mounting is not allowed.
    static func smallFileSystem(in dir: TemporaryDirectory, kilobytes: Int) -> String? {
        let mountPoint = dir.path("small")
        try? FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard getuid() == 0, let mount = try? Spawned(executable: "/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", mountPoint]),
            (try? mount.wait()) == 0
        else { return nil }
        return mountPoint
    }

    @Test func backupOntoAFullFileSystemBlamesTheDestination() throws {
        let dir = try TemporaryDirectory()
        guard let small = Self.smallFileSystem(in: dir, kilobytes: 64) else { return }  // needs root and tmpfs
        defer { _ = try? Spawned(executable: "/bin/umount", [small]).wait() }
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.write { tx in
            for i in 0..<2000 { try tx.execute("INSERT INTO notes(id, title) VALUES (?, ?)", ["n\(i)", String(repeating: "x", count: 200)]) }
        }
        let destination = small + "/copy.db"
        let result = try tandem(["backup", db.path, destination])
        #expect(result.status == 1)
        #expect(result.stderr.contains("'\(destination)'") && result.stderr.contains("full"), "\(result.stderr)")
        #expect(!result.stderr.contains("'\(db.path)'"), "blames the database: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: destination), "the partial copy is removed")
        #expect(try count(db, "SELECT count(*) FROM notes") == 2000)
    }

    @Test func importOfAFileItCannotReadSaysWhy() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let cases = [(dir.path("missing.json"), "no such file"), (dir.path(""), "is a directory")]
        for (file, reason) in cases {
            let result = try tandem(["import", db.path, "notes", file])
            #expect(result.status == 1)
            #expect(result.stderr.contains(reason) && !result.stderr.contains("Usage:"), "\(file): \(result.stderr)")
        }
    }

    @Test func importErrorsAboutValidJSONDoNotCallItInvalid() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let payloads = [
            #"[{"id":"a","done":"x"}]"#, #"[{"id":"a","nope":1}]"#, #"[{"title":"no id"}]"#, #"[1]"#, #"{"id":"a"}"#,
            #"[{"id":"a"},{"id":"a"}]"#, #"[{"id":"a","score":[1]}]"#,
        ]
        for payload in payloads {
            let file = dir.path("p.json")
            try payload.write(toFile: file, atomically: true, encoding: .utf8)
            let result = try tandem(["import", db.path, "notes", file, "--strict"])
            #expect(result.status == 1, "\(payload)")
            #expect(!result.stderr.contains("invalid JSON"), "\(payload): \(result.stderr)")
        }
        let broken = dir.path("broken.json")
        try #"[{"id":"a",}]"#.write(toFile: broken, atomically: true, encoding: .utf8)
        #expect(try tandem(["import", db.path, "notes", broken]).stderr.contains("invalid JSON"))
    }

    @Test func aSetAsideUploadIsNotSaidToStayQueued() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('bad-one', 'x')")
        _ = try db.sync.once(with: RefusingBackend())
        let status = try tandem(["status", db.path])
        #expect(status.stdout.contains("pending uploads: 0"), "\(status.stdout)")
        let crud = try tandem(["crud", db.path])
        #expect(crud.stdout.contains("set aside") && !crud.stdout.contains("stays queued"), "\(crud.stdout)")
    }
}

/// The same through `tandem sync` against a real server that refuses an upload.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct PostgresCommandMessageTests {
    @Test func syncSaysARefusedUploadIsSetAsideNotQueued() throws {
        let url = try TestPostgres.database(schema: notesSchema)
        let psql = try PostgresConnection(url)
        try psql.execute("ALTER TABLE notes ADD CONSTRAINT not_negative CHECK (done >= 0)")
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title, done) VALUES ('negative', 'x', -1)")
        let sync = try tandem(["sync", db.path, "--backend", url])
        #expect(sync.status == 1)
        #expect(sync.stderr.contains("set aside") && !sync.stderr.contains("stays queued"), "\(sync.stderr)")
        #expect(try tandem(["status", db.path]).stdout.contains("pending uploads: 0"))
    }
}
