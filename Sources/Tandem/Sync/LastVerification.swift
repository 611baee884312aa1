import Foundation

/// The last verification's result, as ``SyncStatus/lastVerification`` shows it (``DatabaseSync/verify(with:repair:tables:)``) (stored as JSON in the file, so
/// every process's status shows it, whichever process verified).
public struct LastVerification: Codable, Sendable, Hashable {
    /// When it began.
    public var at: Date
    /// True when every table agreed (pending and in-flight rows aside).
    public var agrees: Bool
    /// The rows that differed (before any repair), and those repaired.
    public var differingRows: Int
    public var repairedRows: Int
    /// The tables that differed, by name.
    public var differingTables: [String]
    /// Why it could not be made, when it failed (then `agrees` is false and nothing was compared).
    public var error: String?

    enum CodingKeys: String, CodingKey {
        case at, agrees, error
        case differingRows = "differing_rows", repairedRows = "repaired_rows", differingTables = "differing_tables"
    }

    init(at: Date, agrees: Bool, differingRows: Int, repairedRows: Int, differingTables: [String], error: String? = nil) {
        self.at = at
        self.agrees = agrees
        self.differingRows = differingRows
        self.repairedRows = repairedRows
        self.differingTables = differingTables
        self.error = error
    }

    func store(in database: SharedDatabase) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(self), as: UTF8.self)
        try database.write { try $0.store(.lastVerification, text) }
    }

    static func load(in tx: Transaction) throws -> LastVerification? {
        guard let text = try tx.stored(.lastVerification).stringValue else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(LastVerification.self, from: Data(text.utf8))
    }
}
