import Foundation

/// What an existing SQLite file holds, read without changing it (a read-only connection: the
/// journal mode stays, no sidecar file is made): whether Tandem made it, its journal mode, and
/// the objects another program made in it.
///
/// Opening a file with a schema makes it a Tandem database: WAL mode, Tandem's tables beside
/// whatever it held. `tandem init` surveys the file first and refuses a file of another
/// program unless told to adopt it.
public struct DatabaseFileSurvey: Sendable, Equatable {
    /// A table, view, index or trigger in the file.
    public struct Object: Sendable, Equatable, CustomStringConvertible {
        /// `table`, `view`, `index` or `trigger`.
        public var type: String
        public var name: String
        /// `table users`.
        public var description: String { "\(type) \(name)" }
    }

    /// The file's absolute path.
    public var path: String
    /// The file holds a schema Tandem stored.
    public var isTandemDatabase: Bool
    /// `wal` for a file in WAL mode (its header says so), else `delete` (the other rollback
    /// journal modes last only as long as a connection).
    public var journalMode: String
    /// The objects of a file Tandem did not make (SQLite's own `sqlite_` objects left out);
    /// empty for a Tandem database.
    public var foreignObjects: [Object]
    /// The tables of the schema Tandem stored, by name (empty for another program's file, and
    /// for a Tandem file that declares none, such as an embedded backend's server file).
    public var declaredTables: [String] = []
    /// The database's own id (``SharedDatabase/clientID()``), made when Tandem created the
    /// file; nil when the file holds none.
    public var clientID: String?

    /// The survey of the file at `path`, or nil when there is none or it is empty.
    /// - Parameter path: the database file.
    /// - Parameter onDiskOnly: read the file as it is on disk (an immutable read), even while a
    ///   `-wal` beside it may hold newer commits: nothing at all is touched, the `-shm` of a file
    ///   in use included, but commits not yet checkpointed are not seen. By default a file with
    ///   a `-wal` or `-journal` is read the usual way (read-only), which sees every commit.
    /// - Throws: ``TandemError/cannotOpen(path:reason:)`` for a file that is not an SQLite
    ///   database or cannot be read.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/uri.html#uriimmutable
    public static func of(path: String, onDiskOnly: Bool = false) throws -> DatabaseFileSurvey? {
        let resolved = try SharedDatabase.resolvedPath(path)
        guard FileManager.default.fileExists(atPath: resolved), Opening.fileSize(resolved) > 0 else { return nil }
        // Read before the survey's connection opens (``LockSafeFiles``).
        let wal = walHeader(resolved)
        let connection: Connection
        do {
            // Without a -wal or -journal beside it, every commit is in the file: it is read as
            // it is on disk, so that a WAL-mode file gains no -wal or -shm from the survey.
            let sidecars = !onDiskOnly && ["-wal", "-journal"].contains { FileManager.default.fileExists(atPath: resolved + $0) }
            connection =
                sidecars
                ? try Opening.openReader(path: resolved, configuration: Configuration())
                : try Connection(
                    path: resolved, readOnly: true, busyTimeoutMilliseconds: Configuration().busyTimeoutMilliseconds, immutable: true,
                    rules: LayoutRules())
            try Opening.configureReader(connection)
        } catch let error as SQLiteError {
            throw TandemError.cannotOpen(path: resolved, reason: error.message)
        }
        // A file with Tandem's bookkeeping tables is Tandem's even when its stored settings were
        // deleted (init repairs it); only another program's file needs --adopt.
        let isTandem =
            try !(connection.storedIfPresent(.schema)).isNull
            || connection.scalar(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)",
                [.text(InternalTables.crud), .text(InternalTables.state)]
            ).int64Value == 2
        let objects =
            isTandem
            ? []
            : try connection.fetchAll(
                "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid"
            ).map { Object(type: $0[0].stringValue ?? "", name: $0[1].stringValue ?? "") }
        let declared = try SchemaInstaller.storedSchema(Transaction(connection: connection, isReadOnly: true))?.tables.map(\.name) ?? []
        let clientID = try connection.storedIfPresent(.clientID).stringValue.flatMap { $0.isEmpty ? nil : $0 }
        return DatabaseFileSurvey(
            path: resolved, isTandemDatabase: isTandem, journalMode: wal ? "wal" : "delete",
            foreignObjects: objects, declaredTables: declared, clientID: clientID)
    }

    /// The header's file format versions are 2 for a WAL database (bytes 18 and 19).
    ///
    /// Related SQLite documentation: https://www.sqlite.org/fileformat.html#file_format_version_numbers
    private static func walHeader(_ path: String) -> Bool {
        guard let header = LockSafeFiles.read(path, of: path, count: 20) else { return false }
        return header.count == 20 && header[18] == 2
    }

    /// The foreign objects named like a table of `schema` (or its data table), which Tandem
    /// cannot make beside them (SQLite's names are case-insensitive).
    public func collisions(with schema: Schema) -> [Object] {
        let taken = Set(schema.tables.flatMap { [$0.name.lowercased(), $0.dataTableName.lowercased()] })
        return foreignObjects.filter { taken.contains($0.name.lowercased()) }
    }
}
