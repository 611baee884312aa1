import Foundation
import Tandem

// tandem-api-example URL DB [TITLE...]: writes a note per TITLE into DB, syncs DB through the
// reference API at URL with the Swift connector until everything written is on the server and
// the server's changes are here, then prints how many notes DB holds.
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2, let base = URL(string: arguments[arguments.startIndex]) else {
    FileHandle.standardError.write(Data("usage: tandem-api-example URL DB [TITLE...]\n".utf8))
    exit(2)
}
let db = try SharedDatabase(path: arguments[arguments.startIndex + 1], schema: Schema(tables: [TableSchema(name: "notes", columns: [.text("title")])]))
for title in arguments.dropFirst(2) { try db.execute("INSERT INTO notes(id, title) VALUES (?, ?)", [UUID().uuidString, title]) }
let session = try db.sync.start(connector: APIConnector(base: base))
try await db.sync.waitUntilSynced(timeout: .seconds(60))
session.stop()
print("synced \(try db.fetchAll("SELECT count(*) FROM notes")[0][0].int64Value ?? 0) notes")
