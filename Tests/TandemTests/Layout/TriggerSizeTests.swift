import Foundation
import Testing
@testable import Tandem

/// Every connection parses the whole schema at its first statement, the views' triggers too, so
/// their size is what opening a database costs (ten tables of twenty columns had 2 MB of
/// trigger SQL, 75 ms a connection). Each column's conversion rule is written into each trigger
/// once, never nested inside another rule's repeated argument, nor written again for a second
/// use (an update trigger's change test and its patch value read one subquery).
@Suite struct TriggerSizeTests {
    @Test(arguments: [ColumnSchema.ColumnType.integer, .real, .text], [false, true])
    func eachColumnAddsAtMostTwoAndAHalfKilobytesToEachTrigger(type: ColumnSchema.ColumnType, localOnly: Bool) throws {
        let dir = try TemporaryDirectory()
        let one = try SharedDatabase(path: dir.path("one.db"), schema: Self.schema(columns: 1, type: type, localOnly: localOnly))
        let twenty = try SharedDatabase(path: dir.path("twenty.db"), schema: Self.schema(columns: 20, type: type, localOnly: localOnly))
        for trigger in ["ps_view_insert__t", "ps_view_update__t"] {
            let perColumn = (try Self.size(of: trigger, in: twenty) - Self.size(of: trigger, in: one)) / 19
            #expect(perColumn > 0 && perColumn <= 2_500, "\(trigger)\(localOnly ? " (local-only)" : ""): \(perColumn) bytes for each \(type) column")
        }
    }

    static func schema(columns: Int, type: ColumnSchema.ColumnType, localOnly: Bool = false) -> Schema {
        Schema(tables: [TableSchema(name: "t", columns: (0..<columns).map { ColumnSchema(name: "c\($0)", type: type) }, localOnly: localOnly)])
    }

    static func size(of trigger: String, in db: SharedDatabase) throws -> Int {
        Int(try db.read { try $0.scalar("SELECT length(sql) FROM sqlite_master WHERE name = ?", [trigger]).int64Value } ?? 0)
    }
}
