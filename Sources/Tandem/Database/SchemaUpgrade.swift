import Foundation

/// What opening a database with another schema does to the rows it holds, table by table: the
/// changes that move, hide, keep aside or upload rows (new tables and new columns, which only
/// add, are not listed).
///
/// ```swift
/// let upgrade = try db.upgrade(to: newSchema)
/// if upgrade.localRowsToUpload > 0 { /* ask before the rows leave the host */ }
/// ```
public struct SchemaUpgrade: Sendable, Equatable {
    /// One change to the stored rows.
    public enum Effect: Sendable, Equatable, CustomStringConvertible {
        /// A local-only table becomes synced or insert-only: its rows (but those the server
        /// changed meanwhile, whose server state wins) are queued for upload and leave the host.
        case localRowsUploaded(table: String, rows: Int)
        /// A synced table becomes local-only: its rows stay on this host and are no longer synced.
        case rowsStopSyncing(table: String, rows: Int)
        /// A synced table becomes local-only with changes still waiting for upload (queued, or
        /// set aside after the backend refused them): they are withdrawn and never uploaded; the
        /// rows stay on this host as they are.
        case pendingUploadsWithdrawn(table: String, entries: Int)
        /// An insert-only table becomes local-only with inserts still waiting for upload: each
        /// becomes a row of the table on this host, and none is uploaded.
        case pendingInsertsKept(table: String, rows: Int)
        /// A synced table becomes insert-only: its rows leave the table (it keeps none) and wait,
        /// kept current by downloads, for a switch back.
        case rowsSetAside(table: String, rows: Int)
        /// A table is no longer declared: its rows stay in the file, unread, until it is declared again.
        case tableDropped(table: String, rows: Int)
        /// A column is no longer declared: its values stay in the stored rows, unread.
        case columnDropped(table: String, column: String)
        /// A column is declared with another type: stored values are kept and read as the new type.
        case columnRetyped(table: String, column: String, from: ColumnSchema.ColumnType, to: ColumnSchema.ColumnType)
        /// Of a retyped column's stored values, `rows` do not convert to the new type exactly (the
        /// column would refuse them if written now) and read differently: `examples` names the
        /// first few, each as `row 'id': value`.
        case valuesReadInexactly(table: String, column: String, type: ColumnSchema.ColumnType, rows: Int, examples: [String])

        public var description: String {
            switch self {
            case .localRowsUploaded(let table, let rows):
                return "\(table): local-only until now; \(Self.its(rows, "is", "are")) queued for upload and \(rows == 1 ? "leaves" : "leave") this host"
            case .rowsStopSyncing(let table, let rows):
                return "\(table): local-only from now on; \(Self.its(rows, "stays", "stay")) on this host and \(rows == 1 ? "is" : "are") no longer synced"
            case .pendingUploadsWithdrawn(let table, let entries):
                return
                    "\(table): \(entries) change\(entries == 1 ? "" : "s") waiting for upload \(entries == 1 ? "is" : "are") withdrawn and never uploaded (the rows stay on this host as they are)"
            case .pendingInsertsKept(let table, let rows):
                return
                    "\(table): local-only from now on; its \(rows) insert\(rows == 1 ? "" : "s") waiting for upload become\(rows == 1 ? "s a row" : " rows") on this host and \(rows == 1 ? "is" : "are") never uploaded"
            case .rowsSetAside(let table, let rows):
                return
                    "\(table): insert-only from now on; \(Self.its(rows, "leaves", "leave")) the table and \(rows == 1 ? "is" : "are") kept aside (downloads keep them current) for a switch back"
            case .tableDropped(let table, let rows):
                return "\(table): no longer declared; \(Self.its(rows, "stays", "stay")) in the file, unread, until it is declared again"
            case .columnDropped(let table, let column):
                return "\(table).\(column): no longer declared; its values stay in the stored rows, unread"
            case .columnRetyped(let table, let column, let from, let to):
                return "\(table).\(column) changed type from \(from.rawValue) to \(to.rawValue): stored values are kept and read as \(to.rawValue)"
            case .valuesReadInexactly(let table, let column, let type, let rows, let examples):
                return
                    "\(table).\(column): \(rows) stored value\(rows == 1 ? " does" : "s do") not convert to \(type.rawValue) exactly and \(rows == 1 ? "reads" : "read") differently (\(examples.joined(separator: ", "))\(rows > examples.count ? ", …" : "")); rewrite \(rows == 1 ? "it" : "them") before the change, or keep the column's type"
            }
        }

        /// "its 1 row stays", "its 3 rows stay".
        private static func its(_ count: Int, _ one: String, _ many: String) -> String {
            count == 1 ? "its 1 row \(one)" : "its \(count) rows \(many)"
        }
    }

    /// The changes, in the new schema's table order, then the dropped tables.
    public var effects: [Effect]

    /// An upgrade with `effects` (none: a new database, or the same schema).
    public init(effects: [Effect] = []) { self.effects = effects }

    /// How many rows the upgrade queues for upload from tables that were local-only.
    public var localRowsToUpload: Int {
        effects.reduce(0) { total, effect in
            if case .localRowsUploaded(_, let rows) = effect { return total + rows }
            return total
        }
    }
}

extension SharedDatabase {
    /// What opening this database with `schema` would do to its rows (reads only). A database
    /// opened with a schema that switches a local-only table to synced queues its rows for
    /// upload: use this to ask first (`tandem init` asks for `--upload-local-rows`).
    /// - Throws: what a read throws.
    public func upgrade(to schema: Schema) throws -> SchemaUpgrade {
        let stored = self.schema
        return try read { tx in
            func count(_ table: TableSchema, notWaiting: Bool = false) throws -> Int {
                guard try tx.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [table.dataTableName]).int64Value == 1 else { return 0 }
                let filter = notWaiting ? " WHERE NOT \(UntypedRows.waitingCondition)" : ""
                return Int(try tx.scalar("SELECT count(*) FROM \(table.quotedDataTable)\(filter)", notWaiting ? [table.name] : []).int64Value ?? 0)
            }
            var upgrade = SchemaUpgrade()
            for table in schema.tables {
                guard let before = stored.table(named: table.name) else { continue }
                let wasSynced = !before.localOnly && !before.insertOnly
                if before.localOnly && !table.localOnly {
                    upgrade.effects.append(.localRowsUploaded(table: table.name, rows: try count(before, notWaiting: true)))
                } else if wasSynced && table.localOnly {
                    upgrade.effects.append(.rowsStopSyncing(table: table.name, rows: try count(before)))
                    let pending = try LocalOnlySwitch.pendingEntries(of: table.name, in: tx)
                    if pending > 0 { upgrade.effects.append(.pendingUploadsWithdrawn(table: table.name, entries: pending)) }
                } else if before.insertOnly && table.localOnly {
                    let pending = try LocalOnlySwitch.pendingEntries(of: table.name, in: tx)
                    if pending > 0 { upgrade.effects.append(.pendingInsertsKept(table: table.name, rows: pending)) }
                } else if wasSynced && table.insertOnly {
                    upgrade.effects.append(.rowsSetAside(table: table.name, rows: try count(before)))
                }
                for column in before.columns {
                    if let now = table.columns.first(where: { $0.name == column.name }) {
                        if now.type != column.type {
                            upgrade.effects.append(.columnRetyped(table: table.name, column: column.name, from: column.type, to: now.type))
                            if let inexact = try InexactValues.find(of: now, in: table, stored: before, in: tx) { upgrade.effects.append(inexact) }
                        }
                    } else {
                        upgrade.effects.append(.columnDropped(table: table.name, column: column.name))
                    }
                }
            }
            for before in stored.tables where schema.table(named: before.name) == nil {
                upgrade.effects.append(.tableDropped(table: before.name, rows: try count(before)))
            }
            return upgrade
        }
    }
}
