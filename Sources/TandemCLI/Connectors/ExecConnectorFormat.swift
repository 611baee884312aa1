import Foundation
import Tandem

/// The JSON a connector program reads and writes (version 1). Numbers keep their kind and every
/// bit (an integer is written without a fraction, a real with one, `-0.0` with its sign), text
/// its every character (NUL as `\u0000`).
///
/// `PROGRAM ARGS upload` reads
/// `{"version":1,"client_id":"…","epoch":3,"transactions":[{"id":12,"entries":[{"op":"PUT","table":"notes","id":"a","data":{"title":"x"}}]}]}`
/// (`op` PUT with every column, PATCH with the changed ones, DELETE without `data`) and answers
/// one of:
/// - `{"version":1,"results":[{"id":12,"outcome":"applied"},{"id":13,"outcome":"refused","reason":"…"},{"id":14,"outcome":"retry","reason":"…"}]}`;
/// - `{"version":1,"batch":"applied"}` (or `"refused"`, `"retry"`, with a `"reason"`): the same outcome for every transaction;
/// - `{"version":1,"stale_epoch":5}`: the API has seen epoch 5 for this client.
///
/// `PROGRAM ARGS fetch` reads `{"version":1,"cursor":"…","limit":1000}` (the cursor is `""` at
/// first) and answers `{"version":1,"changes":[{"op":"PUT","table":"notes","id":"a","data":{…}},{"op":"DELETE","table":"notes","id":"b"}],"cursor":"…","has_more":false}`;
/// a program without downloads answers `{"version":1,"changes":[],"cursor":""}`.
///
/// `PROGRAM ARGS pulls` reads `{"version":1}` and answers the pulls it offers:
/// `{"version":1,"pulls":[{"table":"notes","scope":{"column":"folder_id","value":"F1"},"format":"ndjson"}]}`
/// (`scope` optional, `format` `array` by default); `PROGRAM ARGS pull` then reads
/// `{"version":1,"table":"notes","scope":{…}}` and prints the rows: a JSON array, or one object a line.
/// A pull that gives a `"url"` (http or https) is read from there with a GET instead (by `curl`).
enum ExecConnectorFormat {
    static let version: Int64 = 1

    /// The upload request, written member by member (a batch's thousands of entries, no object
    /// built for each), the members of each object in a fixed order.
    static func uploadRequest(_ batch: UploadBatch) -> String {
        var text = JSONText()
        text.append("{\"version\":\(version),\"client_id\":")
        JSONValue.writeString(batch.clientID, to: &text)
        text.append(",\"epoch\":\(batch.epoch),\"transactions\":[")
        for (index, transaction) in batch.transactions.enumerated() {
            text.append(index == 0 ? "{\"id\":" : ",{\"id\":")
            text.append(String(transaction.transactionID))
            text.append(",\"entries\":[")
            for (index, entry) in transaction.entries.enumerated() {
                text.append(index == 0 ? "{\"op\":" : ",{\"op\":")
                JSONValue.writeString(entry.op.rawValue, to: &text)
                text.append(",\"table\":")
                JSONValue.writeString(entry.table, to: &text)
                text.append(",\"id\":")
                JSONValue.writeString(entry.rowID, to: &text)
                if let data = entry.data {
                    text.append(",\"data\":")
                    JSONValue.object(data).write(to: &text)
                }
                text.append("}")
            }
            text.append("]}")
        }
        text.append("]}")
        return text.string
    }

    /// A pull as a program declares it: fetched by `PROGRAM ARGS pull`, or from `url` (http or
    /// https) with a GET.
    struct DeclaredPull {
        var table: String
        var scope: PullScope?
        var format: PayloadFormat
        var url: String?
    }

    static let pullsRequest = #"{"version":1}"#

    static func pullRequest(_ pull: DeclaredPull) -> String {
        var object: [String: JSONValue] = ["version": .integer(version), "table": .string(pull.table)]
        if let scope = pull.scope { object["scope"] = .object(["column": .string(scope.column), "value": .string(scope.value)]) }
        return JSONValue.object(object).jsonText
    }

    static func pulls(_ answer: String, program: String) throws -> [DeclaredPull] {
        let object = try answerObject(answer, program: program)
        guard case .array(let items)? = object["pulls"] else { throw ConnectorFailure("\(program) answered pulls without a pulls list: \(answer.prefix(200))") }
        return try items.map { item in
            guard case .object(let fields) = item, case .string(let table)? = fields["table"] else {
                throw ConnectorFailure("\(program) declared a pull without a table: \(item.jsonText.prefix(200))")
            }
            var scope: PullScope?
            if case .object(let s)? = fields["scope"] {
                guard case .string(let column)? = s["column"], case .string(let value)? = s["value"] else {
                    throw ConnectorFailure("\(program) declared a scope without a text column and value: \(item.jsonText.prefix(200))")
                }
                scope = PullScope(column: column, value: value)
            }
            var format = PayloadFormat.array
            if case .string(let name)? = fields["format"] {
                guard let known = PayloadFormat(rawValue: name) else { throw ConnectorFailure("\(program) declared a pull format '\(name)' (array or ndjson)") }
                format = known
            }
            var url: String?
            if let declared = fields["url"] {
                guard case .string(let text) = declared, let parsed = URL(string: text), ["http", "https"].contains(parsed.scheme?.lowercased() ?? "")
                else { throw ConnectorFailure("\(program) declared a pull url \(declared.jsonText.prefix(200)) (an http or https URL)") }
                url = text
            }
            return DeclaredPull(table: table, scope: scope, format: format, url: url)
        }
    }

    static func fetchRequest(cursor: String, limit: Int) -> String {
        JSONValue.object(["version": .integer(version), "cursor": .string(cursor), "limit": .integer(Int64(limit))]).jsonText
    }

    /// The outcomes an upload answer gives, checked against `batch`.
    static func outcomes(_ answer: String, batch: UploadBatch, program: String) throws -> [UploadOutcome] {
        let object = try answerObject(answer, program: program)
        if case .integer(let current)? = object["stale_epoch"] {
            throw TandemError.staleEpoch(held: batch.epoch, current: current)
        }
        if case .string(let outcome)? = object["batch"] {
            let kind = try self.kind(outcome, reason: object["reason"], program: program)
            return batch.transactions.map { UploadOutcome(transactionID: $0.transactionID, kind) }
        }
        guard case .array(let results)? = object["results"] else {
            throw ConnectorFailure("\(program) answered an upload without results, batch or stale_epoch: \(answer.prefix(200))")
        }
        return try results.map { result in
            guard case .object(let fields) = result, case .integer(let id)? = fields["id"], case .string(let outcome)? = fields["outcome"] else {
                throw ConnectorFailure("\(program) answered with a result that has no id or outcome: \(result.jsonText.prefix(200))")
            }
            return UploadOutcome(transactionID: id, try kind(outcome, reason: fields["reason"], program: program))
        }
    }

    /// The changes a fetch answer gives.
    static func changes(_ answer: String, cursor: String, program: String) throws -> ChangeBatch {
        let object = try answerObject(answer, program: program)
        guard case .array(let items)? = object["changes"], case .string(let next)? = object["cursor"] else {
            throw ConnectorFailure("\(program) answered a fetch without changes and cursor: \(answer.prefix(200))")
        }
        let changes = try items.map { item -> ServerChange in
            guard case .object(let fields) = item, case .string(let op)? = fields["op"], case .string(let table)? = fields["table"] else {
                throw ConnectorFailure("\(program) sent a change without op and table: \(item.jsonText.prefix(200))")
            }
            let id: String
            if case .string(let text)? = fields["id"] { id = text } else { id = "" }
            switch op {
            case "PUT":
                guard case .object? = fields["data"], !id.isEmpty else { throw ConnectorFailure("\(program) sent a PUT without id or data object") }
                return ServerChange(op: .put, table: table, rowID: id, data: fields["data"]!.jsonText)
            case "DELETE":
                guard !id.isEmpty else { throw ConnectorFailure("\(program) sent a DELETE without id") }
                return ServerChange(op: .delete, table: table, rowID: id, data: nil)
            case "TRUNCATE":
                return ServerChange(op: .truncate, table: table, rowID: "", data: nil)
            default:
                throw ConnectorFailure("\(program) sent a change with op '\(op)' (PUT, DELETE or TRUNCATE)")
            }
        }
        var more = false
        if case .bool(let flag)? = object["has_more"] { more = flag }
        return ChangeBatch(changes: changes, nextCursor: next.isEmpty && changes.isEmpty ? cursor : next, hasMore: more)
    }

    private static func answerObject(_ answer: String, program: String) throws -> [String: JSONValue] {
        // The parser skips white space around the value.
        guard case .object(let object)? = try? JSONValue(parsing: answer) else {
            let text = answer.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { throw ConnectorFailure("\(program) answered nothing") }
            throw ConnectorFailure("\(program) answered with something that is not a JSON object: \(text.prefix(200))")
        }
        guard object["version"] == .integer(version) else {
            throw ConnectorFailure("\(program) answered format version \(object["version"]?.jsonText ?? "none"), not \(version)")
        }
        return object
    }

    private static func kind(_ outcome: String, reason: JSONValue?, program: String) throws -> UploadOutcome.Kind {
        var why = ""
        if case .string(let text)? = reason { why = text }
        switch outcome {
        case "applied": return .applied
        case "refused": return .refused(reason: why.isEmpty ? "refused by \(program)" : why)
        case "retry": return .retryLater(reason: why.isEmpty ? "asked to retry" : why)
        default: throw ConnectorFailure("\(program) answered outcome '\(outcome)' (applied, refused or retry)")
        }
    }
}
