import Foundation
import Testing
@testable import Tandem

/// `tandem backup` gives the copy the database file's permission bits whatever the umask, and
/// the copy is readable by its owner only while it is being written.
@Suite struct BackupModeTests {
    func mode(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    /// `tandem backup SOURCE DEST` under `umask`.
    func backup(_ source: String, _ destination: String, umask: mode_t) throws -> Spawned {
        try Spawned(
            executable: "/bin/sh",
            [
                "-c", #"umask "$0" && exec "$1" backup "$2" "$3""#,
                String(umask, radix: 8), tandemBinary, source, destination,
            ])
    }

    @Test func theCopyHasTheSourcesModeWhateverTheUmask() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        try db.execute("INSERT INTO notes(id, title) VALUES ('a', 'secret')")
        for sourceMode: mode_t in [0o600, 0o640, 0o660, 0o644, 0o604, 0o400, 0o700] {
            #expect(chmod(db.path, sourceMode) == 0)
            for umask: mode_t in [0o022, 0o077, 0o000, 0o777] {
                let destination = dir.path("copy-\(String(sourceMode, radix: 8))-\(String(umask, radix: 8)).db")
                let run = try backup(db.path, destination, umask: umask)
                #expect(try run.wait() == 0, "\(run.stderr)")
                #expect(
                    mode(destination) == sourceMode,
                    "a \(String(sourceMode, radix: 8)) database under umask \(String(umask, radix: 8)) gave a \(mode(destination).map { String($0, radix: 8) } ?? "missing") copy")
            }
        }
        #expect(chmod(db.path, 0o600) == 0)
    }

    @Test func theCopyIsOwnerOnlyWhileItIsWritten() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("big.db"), schema: notesSchema)
        let text = String(repeating: "x", count: 4000)
        try db.write { tx in
            _ = try tx.insert(into: "notes", columns: ["title"], rows: (0..<1_000).lazy.map { _ in [DatabaseValue.text(text)] })
        }
        #expect(chmod(db.path, 0o644) == 0)
        let destination = dir.path("copy.db")
        let run = try backup(db.path, destination, umask: 0o022)
        // Every look at the copy before it has its final size (pages are still being written)
        // finds it owner-only.
        var looks: [(mode: mode_t, size: off_t)] = []
        while run.isRunning {
            var info = stat()
            if stat(destination, &info) == 0 { looks.append((info.st_mode & 0o7777, info.st_size)) }
        }
        #expect(try run.wait() == 0, "\(run.stderr)")
        var final = stat()
        #expect(stat(destination, &final) == 0)
        #expect(final.st_mode & 0o7777 == 0o644)
        let partial = looks.filter { $0.size < final.st_size }
        #expect(!partial.isEmpty, "the copy was never seen part-written (\(looks.count) looks); the test's database is too small for this machine")
        #expect(partial.allSatisfy { $0.mode == 0o600 }, "part-written copy modes: \(Set(partial.map { String($0.mode, radix: 8) }))")
    }
}
