import Foundation
import Testing
@testable import Tandem
@testable import TandemPostgres

/// `tandem backend check URL` lists each Tandem server object with its owner and privileges, and
/// flags what a tenant could reach that it should not, with the remedy.
@Suite(.enabled(if: TestPostgres.url != nil, "needs TANDEM_TEST_POSTGRES_URL (Tools/test starts a server)"))
struct BackendCheckTests {
    typealias Fleet = ScopedSyncTests.Fleet

    @Test func listsEveryObjectAndFlagsWhatATenantCouldReach() throws {
        let fleet = try Fleet()
        let clean = try runTandem(["backend", "check", fleet.admin])
        #expect(clean.status == 0, "\(clean.stdout) \(clean.stderr)")
        for line in [
            "function tandem_log_missing(text,text) (owner tandem, runs as its owner)", "table folders (owner tandem, row-level security)",
            "table settings (owner tandem): ", "table tandem_changes (owner tandem, row-level security)", "sequence tandem_changes_version_seq",
            "ok: no role reaches past what Tandem grants it", "note: the role \(fleet.prefix)_a1 may write the global table settings",
        ] {
            #expect(clean.stdout.contains(line), "\(line) in \(clean.stdout)")
        }
        #expect(!clean.stdout.contains("PUBLIC"), "\(clean.stdout)")
        #expect(clean.stdout.contains("\(fleet.prefix)_b1: DELETE, INSERT, SELECT, UPDATE"), "b1 on folders: \(clean.stdout)")

        let admin = try PostgresConnection(fleet.admin)
        try admin.execute("GRANT EXECUTE ON FUNCTION tandem_log_missing(text, text) TO PUBLIC")
        try admin.execute("GRANT SELECT ON tandem_clients TO PUBLIC")
        try admin.execute("ALTER TABLE folders DISABLE ROW LEVEL SECURITY")
        try admin.execute("ALTER FUNCTION tandem_new_history() RESET search_path")
        try admin.execute("GRANT CREATE ON SCHEMA public TO \(fleet.prefix)_b2")
        let flagged = try runTandem(["backend", "check", fleet.admin, "--json"])
        #expect(flagged.status == 1, "\(flagged.stdout) \(flagged.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(flagged.stdout.utf8)) as? [String: Any]
        let problems = (json?["problems"] as? [String]) ?? []
        #expect(json?["ok"] as? Bool == false)
        for expected in [
            "PUBLIC (every role) may use the function tandem_log_missing(text,text)", "PUBLIC (every role) may use the table tandem_clients",
            "the scoped table folders has row-level security off", "the function tandem_new_history() runs as tandem without a pinned search path",
            "\(fleet.prefix)_b2 may create objects in Tandem's schema",
        ] {
            #expect(problems.contains { $0.hasPrefix(expected) }, "\(expected) in \(problems)")
        }
        #expect(problems.count == 5, "\(problems)")
        let objects = (json?["objects"] as? [[String: Any]]) ?? []
        #expect(objects.contains { $0["name"] as? String == "tandem_log_missing(text,text)" && $0["security_definer"] as? Bool == true })
        // Setup again mends what it owns.
        try admin.execute("REVOKE CREATE ON SCHEMA public FROM \(fleet.prefix)_b2")
        try admin.execute("REVOKE SELECT ON tandem_clients FROM PUBLIC")
        try PostgresBackend.setup(conninfo: fleet.admin, schema: ScopedSyncTests.schema)
        let mended = try runTandem(["backend", "check", fleet.admin])
        #expect(mended.status == 0, "\(mended.stdout)")
    }

    @Test func aServerNotSetUpIsSaidSo() throws {
        let result = try runTandem(["backend", "check", try TestPostgres.emptyDatabase()])
        #expect(result.status == 1 && result.stderr.contains("is not set up as a Tandem backend"), "\(result.stderr)")
    }
}
