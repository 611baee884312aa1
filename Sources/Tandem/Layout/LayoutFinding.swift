/// One thing wrong with a database file: a missing or changed part of Tandem's layout, a
/// counter that went back, or damage found by SQLite's own page check.
///
/// ``SharedDatabase/check(path:full:configuration:)`` lists findings without changing anything;
/// ``SharedDatabase/repairLayout(storedRows:)`` repairs the repairable ones.
public struct LayoutFinding: Sendable, Hashable, CustomStringConvertible, Remediable {
    /// What is wrong, in the user's terms, e.g. `view notes is missing`.
    public let problem: String
    /// What repairing it means, e.g. `view notes was missing; regenerated it`; nil when it
    /// cannot be repaired safely.
    public let repair: String?
    /// How to repair it.
    let action: LayoutRepair?
    /// What the user can do about it, when it is not a repair of Tandem's (``isRepairable``).
    public let remedy: Remedy?

    /// True when ``SharedDatabase/repairLayout(storedRows:)`` can repair it without losing anything.
    public var isRepairable: Bool { action != nil }

    public var description: String { problem }

    init(_ problem: String, repair: String? = nil, action: LayoutRepair? = nil, remedy: Remedy? = nil) {
        self.problem = problem
        self.remedy = remedy
        self.repair = repair
        self.action = action
    }
}

/// The repairs Tandem can make safely: none changes a row.
enum LayoutRepair: Sendable, Hashable {
    /// Create missing tables of Tandem's own (and missing counters).
    case createInternalTables
    /// Insert missing counters and move counters that went back forward.
    case counters
    /// Store the schema the file is opened with, where none is stored (opening with it does).
    case storeSchema
    /// Make a new client id where it is missing or empty.
    case clientID
    /// Set a missing or malformed owner epoch to 0.
    case epoch
    /// Create the missing, empty data table of a declared table (then its view and triggers).
    case createDataTable(table: String)
    /// Drop and create the view, triggers and indexes of a declared table.
    case regenerate(table: String)
    /// Regenerate every table's objects, written by an older Tandem.
    case upgradeLayout
    /// Make a table's search index again from its rows (it is missing, or drifted from them).
    case rebuildSearch(table: String)
    /// Store a column's values of another type that convert to its own exactly as its own.
    case convertStoredValues(table: String, column: String)
}
