import Foundation
import Synchronization
import Tandem

/// A PostgreSQL snapshot (`pg_current_snapshot()`'s `xmin:xmax:xip,…`): every transaction below
/// `xmin` had ended when it was taken, none from `xmax` on had started, and those in `inProgress`
/// were running. A transaction is visible in it when it committed before it was taken.
///
/// Related documentation: https://www.postgresql.org/docs/15/functions-info.html#FUNCTIONS-PG-SNAPSHOT-PARTS
struct PostgresSnapshot: Equatable, Sendable {
    var xmin: UInt64
    var xmax: UInt64
    var inProgress: [UInt64]

    init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let xmin = UInt64(parts[0]), let xmax = UInt64(parts[1]), xmin <= xmax else { return nil }
        let list = parts[2].isEmpty ? [] : parts[2].split(separator: ",", omittingEmptySubsequences: false).map { UInt64($0) }
        guard !list.contains(nil) else { return nil }
        self.xmin = xmin
        self.xmax = xmax
        inProgress = list.compactMap { $0 }
    }

    var text: String { "\(xmin):\(xmax):" + inProgress.map(String.init).joined(separator: ",") }
    /// The in-progress list as a PostgreSQL array literal of `xid8`.
    var inProgressArray: String { "{" + inProgress.map(String.init).joined(separator: ",") + "}" }
}

/// Where a client stands in the change feed of one server history (see DESIGN.md, "PostgreSQL
/// feed"). Stored by the client as JSON text and handed back to ``PostgresBackend/fetchChanges(after:limit:)``.
///
/// - Settled: every change of a transaction visible in `snapshot` is applied; the next batch is
///   the changes of transactions visible in a newer snapshot and not in this one.
/// - Within a batch (`target` set): the batch up to `target` is delivered up to version `after`
///   (every change of the batch at or below it).
/// - Within a full sync (`table` set): the synced tables are read in name order and by id, from
///   `table` after `afterID`; `snapshot` is the first page's, so the changes after it follow.
struct PostgresCursor: Codable, Equatable, Sendable {
    /// The server history the positions belong to (`tandem_meta.history`).
    var history: String
    var snapshot: String
    var target: String?
    var after: Int64?
    var table: String?
    var afterID: String?
    /// The version of the role's grants the cursor's rows were read under (scoped sync).
    var grants: Int64?

    enum CodingKeys: String, CodingKey {
        case history = "h", snapshot = "s", target = "t", after = "v", table = "table", afterID = "id", grants = "g"
    }

    /// A stored cursor, or nil when it is not one of this backend's (empty, or an older format).
    init?(_ text: String) {
        if let known = Self.recent.withLock({ $0.cursors[Array(text.utf8)] }) {
            self = known
            return
        }
        guard text.hasPrefix("{"), let cursor = try? JSONDecoder().decode(PostgresCursor.self, from: Data(text.utf8)),
            PostgresSnapshot(cursor.snapshot) != nil, cursor.target.map({ PostgresSnapshot($0) != nil }) ?? true
        else { return nil }
        self = cursor
        Self.remember(cursor, text: text, written: false)
    }

    init(history: String, snapshot: String, grants: Int64) {
        self.history = history
        self.snapshot = snapshot
        self.grants = grants == 0 ? nil : grants
    }

    var text: String {
        if let known = Self.recent.withLock({ $0.texts[bytes] }) { return known }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
        Self.remember(self, text: text, written: true)
        return text
    }

    /// The cursors read lately by their text, and the texts written lately (the encoder's) by
    /// their cursor: each pass reads the stored cursor and writes the next, and Foundation's JSON
    /// coders cost a client at 500 commits a second about a tenth of its CPU. Both are keyed by
    /// bytes: Swift's `String` equality is Unicode's canonical equivalence, under which two row
    /// ids that PostgreSQL keeps apart (`é` as one code point or as `e` and a combining accent)
    /// are equal.
    private static let recent = Mutex<(cursors: [[UInt8]: PostgresCursor], texts: [[UInt8]: String])>(([:], [:]))

    private static func remember(_ cursor: PostgresCursor, text: String, written: Bool) {
        recent.withLock { recent in
            if recent.cursors.count >= 64 || recent.texts.count >= 64 { recent = ([:], [:]) }
            recent.cursors[Array(text.utf8)] = cursor
            if written { recent.texts[cursor.bytes] = text }
        }
    }

    /// Every field's bytes, each absent one marked and each present one preceded by its length:
    /// equal exactly when the fields are equal byte for byte.
    private var bytes: [UInt8] {
        var bytes: [UInt8] = []
        let fields = [history, snapshot, target, after.map { String($0) }, table, afterID, grants.map { String($0) }]
        for field in fields {
            guard let field else {
                bytes.append(0)
                continue
            }
            bytes.append(1)
            withUnsafeBytes(of: UInt64(field.utf8.count).littleEndian) { bytes += $0 }
            bytes += field.utf8
        }
        return bytes
    }

    /// The settled snapshot, parsed (checked in ``init(_:)``).
    var settled: PostgresSnapshot { PostgresSnapshot(snapshot)! }
}
