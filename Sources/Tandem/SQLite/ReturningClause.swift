/// The `RETURNING` clause of one INSERT or UPDATE statement, found in its text by a scan that
/// skips string literals, quoted identifiers, comments and parenthesized parts (a subquery, a
/// common table expression), so a column or a string named "returning" is not taken for it.
///
/// Related SQLite documentation: https://www.sqlite.org/lang_returning.html
struct ReturningClause {
    /// The statement without the clause.
    let body: String
    /// The clause's expressions, as written (`id, title`, `*`), without a closing semicolon.
    let list: String

    /// Nil when the statement has no top-level `RETURNING`, or when its list holds a parameter
    /// (which the statement's arguments would bind in another order without the clause).
    init?(_ sql: String) {
        let bytes = Array(sql.utf8)
        var depth = 0, index = 0
        var clause: Int?, end = bytes.count
        func isWordByte(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte == 0x5f || byte == 0x24 || byte >= 0x80
        }
        var parameters = false
        scan: while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"):
                index += 1
                while index < bytes.count {
                    if bytes[index] == byte {
                        if index + 1 < bytes.count, bytes[index + 1] == byte { index += 2; continue }  // a doubled quote
                        break
                    }
                    index += 1
                }
                index += 1
            case UInt8(ascii: "["):
                while index < bytes.count, bytes[index] != UInt8(ascii: "]") { index += 1 }
                index += 1
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                while index < bytes.count, bytes[index] != 0x0a { index += 1 }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index += 2
                while index + 1 < bytes.count, !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) { index += 1 }
                index += 2
            case UInt8(ascii: "("): depth += 1; index += 1
            case UInt8(ascii: ")"): depth -= 1; index += 1
            case UInt8(ascii: ";") where depth == 0:
                end = index
                break scan
            case UInt8(ascii: "?"), UInt8(ascii: ":"), UInt8(ascii: "@"):
                if clause != nil { parameters = true }
                index += 1
            case UInt8(ascii: "$") where clause != nil:
                parameters = true
                index += 1
            case _ where isWordByte(byte):
                let start = index
                while index < bytes.count, isWordByte(bytes[index]) { index += 1 }
                if depth == 0, clause == nil, index - start == 9,
                    String(decoding: bytes[start..<index], as: UTF8.self).lowercased() == "returning"
                {
                    clause = start
                }
            default:
                index += 1
            }
        }
        guard let clause, !parameters else { return nil }
        body = String(decoding: bytes[..<clause], as: UTF8.self)
        list = String(decoding: bytes[(clause + 9)..<min(end, bytes.count)], as: UTF8.self)
        guard list.contains(where: { !$0.isWhitespace }) else { return nil }
    }
}
