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

    /// The `ps_crud` row id: increasing, never reused, also after the queue has emptied
    /// (`crud_last` in `ps_state` remembers the last; were that row lost while the queue is
    /// empty, ids would restart, as `AUTOINCREMENT`'s would without its `sqlite_sequence` row;
    /// `tandem check` reports a missing or low counter).
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

    /// Decodes the JSON text stored in `ps_crud.data`, keeping each number's kind (see ``JSONValue``).
    /// - Throws: ``TandemError/invalidJSON(_:)`` naming the entry when it is not valid.
    init(id: Int64, transactionID: Int64, json: String) throws {
        guard case .object(let object)? = try? JSONValue(parsing: json, refusingDuplicateKeys: false),
            case .string(let opText)? = object["op"], let op = Operation(rawValue: opText),
            case .string(let table)? = object["type"], case .string(let rowID)? = object["id"]
        else {
            throw TandemError.invalidJSON("upload queue entry \(id) is not a CRUD entry of the expected shape: \(json.prefix(200))")
        }
        var data: [String: JSONValue]?
        switch object["data"] {
        case .object(let columns)?: data = columns
        case nil, .null?: data = nil
        default: throw TandemError.invalidJSON("upload queue entry \(id) has data that is not an object: \(json.prefix(200))")
        }
        self.init(id: id, transactionID: transactionID, op: op, table: table, rowID: rowID, data: data)
    }

    /// The entry's JSON in `ps_crud`'s shape.
    public var jsonText: String {
        var text = JSONText()
        write(to: &text)
        return text.string
    }

    /// Writes ``jsonText`` into `sink`: the members in sorted order, as ``JSONValue`` writes an object.
    func write<Sink: JSONTextSink>(to sink: inout Sink) {
        sink.append("{")
        if let data {
            sink.append("\"data\":")
            JSONValue.object(data).write(to: &sink)
            sink.append(",")
        }
        sink.append("\"id\":")
        JSONValue.writeString(rowID, to: &sink)
        sink.append(",\"op\":")
        JSONValue.writeString(op.rawValue, to: &sink)
        sink.append(",\"type\":")
        JSONValue.writeString(table, to: &sink)
        sink.append("}")
    }
}

/// The CRUD entries of one local write transaction, uploaded as one unit.
public struct CrudTransaction: Sendable, Hashable {
    public let transactionID: Int64
    /// The entries in the order they were written.
    public let entries: [CrudEntry]
    /// A 64-bit FNV-1a digest of the entries (their JSON, numbers keeping their kind), in
    /// hexadecimal, which tells a backend a retry (same entries) from different entries under a
    /// reused transaction id (a client file restored from a backup). Computed once, with the
    /// transaction: the sync owner reads the next batch, digests included, while the one before
    /// it is being uploaded.
    public let digest: String

    /// A transaction of `entries`, all with this `transactionID`.
    public init(transactionID: Int64, entries: [CrudEntry]) {
        self.transactionID = transactionID
        self.entries = entries
        self.digest = CrudTransaction.digest(of: entries)
    }

    /// The highest `ps_crud` id in the transaction.
    public var lastEntryID: Int64 { entries.last?.id ?? 0 }

    /// The backend's refusal of the transaction for good, naming its first row.
    func refused(_ reason: String) -> TandemError {
        .uploadRejected(table: entries.first?.table ?? "", rowID: entries.first?.rowID ?? "", reason: reason)
    }
}

extension CrudTransaction {
    /// FNV-1a over each entry's JSON text followed by a newline, hashed as it is written.
    private static func digest(of entries: [CrudEntry]) -> String {
        var hash = FNV1a()
        for entry in entries {
            entry.write(to: &hash)
            hash.append(0x0a)
        }
        return String(hash.value, radix: 16)
    }
}
