import Foundation

/// What ``DatabaseSync/verify(with:repair:tables:)`` found: per synced table, whether this
/// client holds the server's rows, and each row that differs.
public struct VerifyReport: Sendable, Equatable {
    /// One synced table's result.
    public struct Table: Sendable, Equatable {
        public var name: String
        /// The rows this client holds.
        public var localRows: Int
        /// The rows the server holds (that this client may see).
        public var serverRows: Int
        /// Rows that differ, by id order.
        public var differences: [RowDifference]
        /// Rows left out because their edits wait in the upload queue or are set aside: the
        /// server's answer to them comes later.
        public var pendingRows: Int
        /// Rows left out because the server changed them after this client's download cursor:
        /// the next download brings them.
        public var inFlightRows: Int
        /// Rows written from the server's state by a repair.
        public var repairedRows: Int

        public var agrees: Bool { differences.isEmpty }
    }

    public var tables: [Table]
    /// Round trips to the backend (each call of ``VerifyingBackend``).
    public var roundTrips: Int
    /// Payload bytes sent to and received from the backend: ids, checksums (28 bytes per bucket),
    /// digests (12 bytes and the id per row), fetched rows; not the protocol's own bytes.
    public var bytesMoved: Int
    /// Time spent inside the backend's calls (on PostgreSQL mostly the server computing checksums).
    public var backendTime: Duration
    /// When the verification began.
    public var startedAt: Date
    public var duration: Duration

    /// True when every table agrees (pending and in-flight rows aside).
    public var agrees: Bool { tables.allSatisfy(\.agrees) }
    /// Every differing row of every table.
    public var differences: [RowDifference] { tables.flatMap(\.differences) }
}

/// A row whose state here is not the server's.
public struct RowDifference: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The row is here and not on the server.
        case onlyHere = "only_here"
        /// The row is on the server and not here.
        case onlyOnServer = "only_on_server"
        /// Both hold the row, with other values.
        case differentValues = "different_values"
    }

    public var table: String
    public var id: String
    public var kind: Kind

    public init(table: String, id: String, kind: Kind) {
        self.table = table
        self.id = id
        self.kind = kind
    }

    public var description: String {
        switch kind {
        case .onlyHere: return "\(table) id '\(id)': only here"
        case .onlyOnServer: return "\(table) id '\(id)': only on the server"
        case .differentValues: return "\(table) id '\(id)': different values"
        }
    }
}
