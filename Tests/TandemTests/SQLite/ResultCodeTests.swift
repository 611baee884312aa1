import Foundation
import Testing
@testable import Tandem

/// A primary code matches itself and its extended codes; an extended code matches only itself;
/// in a `catch` clause against the errors SQLite really returns.
@Suite struct ResultCodeTests {
    static let primaries: [ResultCode] = [.error, .busy, .locked, .readOnly, .interrupt, .ioError, .corrupt, .full, .cantOpen, .constraint, .misuse, .auth, .notADatabase]
    static let extended: [ResultCode] = [
        .busyRecovery, .busySnapshot, .busyTimeout, .constraintCheck, .constraintForeignKey, .constraintNotNull,
        .constraintPrimaryKey, .constraintTrigger, .constraintUnique, .constraintDatatype, .readOnlyDatabaseMoved,
    ]

    @Test func primaryCodesMatchTheirExtendedCodesAndExtendedCodesOnlyThemselves() {
        for pattern in Self.primaries + Self.extended {
            for code in Self.primaries + Self.extended {
                let expected = pattern.isPrimary ? code.rawValue & 0xff == pattern.rawValue : code == pattern
                let matched =
                    switch code {
                    case pattern: true;
                    default: false
                    }
                #expect(matched == expected, "\(pattern) against \(code)")
            }
        }
        #expect(Self.extended.allSatisfy { !$0.isPrimary && $0.primaryResultCode.isPrimary })
    }

    @Test func catchClausesMatchTheErrorsSQLiteReturns() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("r.db"), schema: Schema(tables: []))
        try db.execute("CREATE TABLE plain(id TEXT PRIMARY KEY, n INTEGER NOT NULL UNIQUE CHECK (n > 0))")
        try db.execute("INSERT INTO plain VALUES ('a', 1)")
        let cases: [(sql: String, code: ResultCode)] = [
            ("INSERT INTO plain VALUES ('a', 2)", .constraintPrimaryKey),
            ("INSERT INTO plain VALUES ('b', 1)", .constraintUnique),
            ("INSERT INTO plain VALUES ('c', NULL)", .constraintNotNull),
            ("INSERT INTO plain VALUES ('d', -1)", .constraintCheck),
        ]
        for (sql, code) in cases {
            do {
                try db.execute(sql)
                Issue.record("\(sql) succeeded")
            } catch let error as SQLiteError {
                #expect(error.extendedResultCode == code && error.code == .constraint, "\(sql): \(error)")
                #expect(code ~= error as any Error && ResultCode.constraint ~= error as any Error, "\(sql)")
                for other in Self.extended where other != code {
                    #expect(!(other ~= error as any Error), "\(other) matched \(sql)")
                }
            }
        }
        // In a catch clause: the extended code first, then its primary code.
        var caught: [String] = []
        for sql in ["INSERT INTO plain VALUES ('a', 5)", "INSERT INTO plain VALUES ('e', 1)"] {
            do { try db.execute(sql) } catch ResultCode.constraintPrimaryKey { caught.append("primary key") } catch ResultCode.constraint { caught.append("constraint") }
        }
        #expect(caught == ["primary key", "constraint"])
    }
}
