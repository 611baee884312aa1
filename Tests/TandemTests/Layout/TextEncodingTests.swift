import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// Text that is not valid UTF-8 (SQLite stores any bytes as text: `CAST(X'61FF62' AS TEXT)`)
/// could not be read back as stored by any client, so every write path refuses it, naming the
/// table and the column; valid text of every kind is stored byte for byte.
@Suite struct TextEncodingTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory() }

    /// Byte strings: valid text of every width (NUL, U+FFFE and U+FFFF included), and the same
    /// with invalid fragments spliced in: stray continuation bytes, truncated and overlong
    /// sequences, surrogates, values past U+10FFFF, bytes that never occur in UTF-8.
    static var samples: [[UInt8]] {
        var random = SeededRandom(seed: 0x0f8)
        let valid: [[UInt8]] = ["a", "é", "日", "😀", "\u{0}", "\u{FFFE}", "\u{FFFF}", "\u{10FFFF}", "\u{7F}", "\u{80}", "\u{7FF}", "\u{800}", "\u{D7FF}", "\u{E000}"]
            .map { Array($0.utf8) }
        let invalid: [[UInt8]] = [
            [0x80], [0xBF], [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0xAF], [0xE0, 0x9F, 0xBF], [0xED, 0xA0, 0x80],
            [0xED, 0xBF, 0xBF], [0xF0, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xFE],
            [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC2], [0xC2, 0x80, 0x80], [0xE2, 0x82, 0xAC, 0xAC],
        ]
        var samples: [[UInt8]] = [[0x61, 0xFF, 0x62]] + valid + invalid
        for _ in 0..<150 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(random.next() % 8) { bytes += valid[Int(random.next() % UInt64(valid.count))] }
            samples.append(bytes)
            let splice = invalid[Int(random.next() % UInt64(invalid.count))]
            let at = Int(random.next() % UInt64(bytes.count + 1))
            samples.append(Array(bytes[..<at]) + splice + Array(bytes[at...]))
        }
        return samples
    }

    static func isUTF8(_ bytes: [UInt8]) -> Bool { String(validating: bytes, as: UTF8.self) != nil }

    /// The stored title of `id`, as hex of its bytes (nil: no row).
    func storedBytes(_ db: SharedDatabase, _ id: String) throws -> String? {
        try db.fetchAll("SELECT hex(CAST(title AS BLOB)) FROM notes WHERE id = ?", [id]).first?[0].stringValue
    }

    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined() }

    @Test func everyPathRefusesTextThatIsNotUTF8() throws {
        let samples = Self.samples
        #expect(samples.filter(Self.isUTF8).count > 50 && samples.filter { !Self.isUTF8($0) }.count > 50)
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        // The library's SQL, on insert and on update, and the id too.
        try db.write { tx in
            for (n, bytes) in samples.enumerated() {
                for (sql, arguments) in [
                    ("INSERT INTO notes(id, title) VALUES (?, CAST(? AS TEXT))", ["i\(n)", DatabaseValue.blob(Data(bytes))] as [any DatabaseValueConvertible]),
                    ("INSERT INTO notes(id, title) VALUES (CAST(? AS TEXT), 'id')", [DatabaseValue.blob(Data(Array("\(n)-".utf8) + bytes))]),
                ] {
                    do {
                        try tx.execute(sql, arguments)
                        #expect(Self.isUTF8(bytes), "\(hex(bytes)) was stored")
                    } catch let error as SQLiteError {
                        #expect(!Self.isUTF8(bytes), "\(hex(bytes)): \(error)")
                        #expect(error.message.contains("is not valid UTF-8") && (error.message.hasPrefix("notes.title") || error.message.hasPrefix("notes.id")), "\(error.message)")
                    }
                }
                try tx.execute("INSERT INTO notes(id, title) VALUES (?, 'before')", ["u\(n)"])
                do { try tx.execute("UPDATE notes SET title = CAST(? AS TEXT) WHERE id = ?", [DatabaseValue.blob(Data(bytes)), "u\(n)"]) } catch {
                    #expect(!Self.isUTF8(bytes), "\(hex(bytes)): \(error)")
                }
            }
        }
        for (n, bytes) in samples.enumerated() {
            #expect(try storedBytes(db, "i\(n)") == (Self.isUTF8(bytes) ? hex(bytes) : nil), "insert \(hex(bytes))")
            #expect(try storedBytes(db, "u\(n)") == (Self.isUTF8(bytes) ? hex(bytes) : hex(Array("before".utf8))), "update \(hex(bytes))")
        }
        // The stored rows and the queue agree byte for byte: the queued JSON reads back as stored.
        let queued = try db.uploadQueue.transactions(limit: 100_000).flatMap(\.entries).filter { $0.rowID.hasPrefix("i") }
        #expect(queued.count == samples.filter(Self.isUTF8).count)
        for entry in queued {
            guard let n = Int(entry.rowID.dropFirst()), case .string(let title)? = entry.data?["title"] else { continue }
            #expect(hex(Array(title.utf8)) == hex(samples[n]))
        }
    }

    /// The sqlite3 shell writes through the same triggers.
    @Test func theShellIsRefusedToo() throws {
        let samples = Self.samples
        let path = dir.path("a.db")
        let db = try SharedDatabase(path: path, schema: notesSchema)
        try db.write { tx in
            try tx.execute("CREATE TABLE source(n INTEGER PRIMARY KEY, b BLOB)")
            for (n, bytes) in samples.enumerated() { try tx.execute("INSERT INTO source(n, b) VALUES (?, ?)", [n, DatabaseValue.blob(Data(bytes))]) }
        }
        let script = samples.indices.map { "INSERT INTO notes(id, title) SELECT 's' || n, CAST(b AS TEXT) FROM source WHERE n = \($0);" }.joined(separator: "\n")
        try script.write(toFile: dir.path("s.sql"), atomically: true, encoding: .utf8)
        let shell = try Spawned(executable: "/usr/bin/sqlite3", [path, ".read \(dir.path("s.sql"))"])
        _ = try shell.wait()
        let errors = shell.stderr.split(separator: "\n").filter { $0.hasPrefix("Runtime error") }
        #expect(errors.count == samples.filter { !Self.isUTF8($0) }.count)
        #expect(errors.allSatisfy { $0.contains("notes.title: the text is not valid UTF-8") }, "\(errors.prefix(2))")
        for (n, bytes) in samples.enumerated() {
            #expect(try storedBytes(db, "s\(n)") == (Self.isUTF8(bytes) ? hex(bytes) : nil), "\(hex(bytes))")
        }
    }

    /// `tandem exec` names the table and the column, and leaves the file as it was.
    @Test func execRefusesInTheUsersTerms() throws {
        let path = dir.path("a.db")
        _ = try SharedDatabase(path: path, schema: notesSchema)
        let result = try runTandem(["exec", path, "INSERT INTO notes(title) VALUES (CAST(X'61FF62' AS TEXT))"])
        #expect(result.status == 1 && result.stderr.contains("notes.title: the text is not valid UTF-8"), "\(result.stderr)")
        #expect(!result.stderr.contains("ps_"))
        #expect(try SharedDatabase(path: path).uploadQueue.pendingCount() == 0)
    }
}
