import Foundation
import Synchronization
import Testing
@testable import Tandem

/// A commit carries the tag bound where it was made (``CommitTag``) to this process's change
/// handlers: how the sync owner tells its own commits from those that queue uploads.
@Suite struct CommitTagTests {
    @Test func aCommitCarriesTheTagBoundWhereItWasMade() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("a.db"), schema: notesSchema)
        let told = Mutex<[CommitTag?]>([])
        let token = try db.addImmediateChangeHandler { change in told.withLock { $0.append(change.tag) } }
        defer { token.cancel() }
        let tag = CommitTag(), other = CommitTag()
        #expect(tag != other, "each tag is new")
        try db.execute("INSERT INTO notes(id, title) VALUES ('untagged', 'x')")
        try tag.bound { try db.execute("INSERT INTO notes(id, title) VALUES ('tagged', 'x')") }
        // Work started ahead on another queue carries the tag of the code that started it.
        let ahead = tag.bound {
            WorkAhead(on: DispatchQueue(label: "elsewhere")) { try db.execute("INSERT INTO notes(id, title) VALUES ('ahead', 'x')") }
        }
        try ahead.value()
        try other.bound { try db.write { try $0.execute("INSERT INTO notes(id, title) VALUES ('other', 'x')") } }
        #expect(told.withLock { $0 } == [nil, tag, tag, other])
    }

    @Test func changesMergeTheirTagOnlyWhenAlike() {
        let tag = CommitTag()
        let a = DatabaseChange(rawTables: ["ps_crud"], tag: tag), b = DatabaseChange(rawTables: ["ps_kv"], tag: tag)
        #expect(a.merged(with: b).tag == tag)
        #expect(a.merged(with: DatabaseChange(rawTables: ["ps_kv"])).tag == nil)
        #expect(a.merged(with: .unknown(tag: tag)).isUnknown && a.merged(with: .unknown(tag: tag)).tag == tag)
        #expect(a == DatabaseChange(rawTables: ["ps_crud"]), "the tag is no part of what changed")
    }
}
