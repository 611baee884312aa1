import Foundation
import Tandem

/// The demo's record: a note written by a helper process.
struct DemoNote: Record {
    var id = ""
    var title: String
    var author: String
    var done = false
    /// CLOCK_MONOTONIC microseconds when it was written (for latency figures).
    var written_at: Int64

    static var tableName: String { "notes" }

    /// The demo's schema, derived from the record, with an index on the author.
    static var schema: Schema {
        get throws { try Schema(records: [RecordTable(DemoNote.self, indexes: [IndexSchema(name: "by_author", columns: ["author"])])]) }
    }
}
