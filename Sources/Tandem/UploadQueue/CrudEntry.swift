import Foundation

/// One queued local change: a row of `ps_crud`, in PowerSync's shape
/// `{"op":"PUT"|"PATCH"|"DELETE","type":"<table>","id":"<id>","data":{…}}`.
///
/// Related documentation: https://docs.powersync.com/client-sdk-references/swift (CrudEntry)
public struct CrudEntry: Sendable, Hashable, Codable {
    /// The kind of change, as in PowerSync's CRUD entries.
    public enum Operation: String, Sendable, Codable {
        /// Insert or replace the whole row.
        case put = "PUT"
        /// Update the named columns only.
        case patch = "PATCH"
        case delete = "DELETE"
    }

    /// The `ps_crud` row id: increasing, never reused.
    public let id: Int64
    /// The local write transaction the entry belongs to.
    /// The local write transaction's id (`tx_id`), the upload's idempotency key with the client id.
    public let transactionID: Int64
    /// PUT, PATCH or DELETE.
    public let op: Operation
    /// The table name (`type` in the JSON).
    public let table: String
    /// The row's id.
    public let rowID: String
    /// Column values: every column for PUT, the changed ones for PATCH, nil for DELETE.
    public let data: [String: JSONValue]?

    /// An entry as stored in `ps_crud`.
    public init(id: Int64, transactionID: Int64, op: Operation, table: String, rowID: String, data: [String: JSONValue]?) {
        self.id = id
        self.transactionID = transactionID
        self.op = op
        self.table = table
        self.rowID = rowID
        self.data = data
    }

    private struct Stored: Codable {
        var op: Operation
        var type: String
        var id: String
        var data: [String: JSONValue]?
    }

    /// Decodes the JSON text stored in `ps_crud.data`.
    /// - Throws: ``TandemError/invalidSQL(sql:reason:)`` naming the entry when it is not valid.
    init(id: Int64, transactionID: Int64, json: String) throws {
        do {
            let stored = try JSONDecoder().decode(Stored.self, from: Data(json.utf8))
            self.init(id: id, transactionID: transactionID, op: stored.op, table: stored.type, rowID: stored.id, data: stored.data)
        } catch {
            throw TandemError.invalidSQL(sql: "ps_crud id \(id)", reason: "the CRUD entry is not valid JSON of the expected shape: \(json)")
        }
    }

    /// The entry's JSON in `ps_crud`'s shape.
    public var jsonText: String {
        var object: [String: JSONValue] = ["op": .string(op.rawValue), "type": .string(table), "id": .string(rowID)]
        if let data { object["data"] = .object(data) }
        return JSONValue.object(object).jsonText
    }
}

/// The CRUD entries of one local write transaction, uploaded as one unit.
public struct CrudTransaction: Sendable, Hashable {
    public let transactionID: Int64
    /// The entries in the order they were written.
    public let entries: [CrudEntry]

    /// A transaction of `entries`, all with this `transactionID`.
    public init(transactionID: Int64, entries: [CrudEntry]) {
        self.transactionID = transactionID
        self.entries = entries
    }

    /// The highest `ps_crud` id in the transaction.
    public var lastEntryID: Int64 { entries.last?.id ?? 0 }
}
