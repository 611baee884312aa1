import Foundation
import Tandem

/// Text through PostgreSQL, whose `text` cannot hold NUL (and whose client library would cut a
/// parameter at one): on the way up each NUL becomes U+FFFF followed by `0`, and each U+FFFF two
/// of them; on the way down the other way round. U+FFFF is a noncharacter, which text meant for
/// interchange does not hold, so other applications see text without NUL as it was, and the rare
/// text with NUL escaped. Ids and text values both go this way, so every value reads back
/// identically on every client.
///
/// Related documentation: https://www.postgresql.org/docs/15/datatype-character.html ("the
/// character with code zero … cannot be stored"), https://www.unicode.org/faq/private_use.html#noncharacters
enum PostgresText {
    static let escape: Unicode.Scalar = "\u{FFFF}"

    /// `text` as the server stores it.
    static func escaped(_ text: String) -> String {
        RowDigest.escaped(text)  // the same form: verification hashes text as the server stores it
    }

    /// `text` as the server stores it, back as it was written (an escape followed by anything
    /// else, which only another application could have written, stays as it is).
    static func unescaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(escape) else { return text }
        var result = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard scalar == escape else {
                result.append(scalar)
                continue
            }
            switch scalars.next() {
            case "0"?: result.append("\0")
            case escape?: result.append(escape)
            case let other?: result.append(contentsOf: [escape, other])
            case nil: result.append(escape)
            }
        }
        return String(result)
    }

    /// A row's JSON object as the server's triggers write it, its strings unescaped; as it is
    /// (not decoded and written again) when it holds no escape.
    static func unescapedRow(_ json: String?) throws -> String? {
        // U+FFFF is EF BF BF in UTF-8: most rows hold no 0xEF byte at all.
        guard let json, json.utf8.contains(0xEF), json.unicodeScalars.contains(escape) else { return json }
        return try unescaped(JSONValue(parsing: json)).jsonText
    }

    private static func unescaped(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text): return .string(unescaped(text))
        case .object(let members): return .object(members.mapValues(unescaped))
        case .array(let elements): return .array(elements.map(unescaped))
        default: return value
        }
    }
}

extension CrudEntry {
    /// The row's id as the server stores it (``PostgresText``).
    var serverRowID: String { PostgresText.escaped(rowID) }
}
