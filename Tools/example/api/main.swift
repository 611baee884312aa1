import Foundation
import Tandem

// tandem-api-example URL DB [TITLE...]: writes a note per TITLE into DB (a new file gets a table
// notes(title); an existing one keeps its schema), syncs DB through the
// reference API at URL with the Swift connector until everything written is on the server and
// the server's changes are here, then prints how many notes DB holds.
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2, let base = URL(string: arguments[arguments.startIndex]) else {
    FileHandle.standardError.write(Data("usage: tandem-api-example URL DB [TITLE...]\n".utf8))
    exit(2)
}
let path = arguments[arguments.startIndex + 1]
let db =
    FileManager.default.fileExists(atPath: path)
    ? try SharedDatabase(path: path)  // an existing file keeps its own schema
    : try SharedDatabase(path: path, schema: Schema(tables: [TableSchema(name: "notes", columns: [.text("title")])]))
for title in arguments.dropFirst(2) { try db.execute("INSERT INTO notes(id, title) VALUES (?, ?)", [UUID().uuidString, title]) }
let session = try db.sync.start(connector: APIConnector(base: base))
try await db.sync.waitUntilSynced(timeout: .seconds(60))
session.stop()
let notes = db.schema.table(named: "notes") == nil ? 0 : try db.fetchAll("SELECT count(*) FROM notes")[0][0].int64Value ?? 0
print("synced \(notes) notes")
