/// Quoting for identifiers and literals in generated DDL. Schema names are validated
/// identifiers; they are quoted all the same. The same rules hold in PostgreSQL, whose backend
/// (another module of this package) uses them too.
package enum SQLText {
    /// `"name"` with embedded quotes doubled.
    package static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `'text'` with embedded quotes doubled.
    package static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// `ids` as a JSON array of their UTF-8 bytes in upper-case hexadecimal, as SQLite's `hex`
    /// writes them, for `hex(id) IN (SELECT value FROM json_each(?))`: SQLite's JSON functions
    /// end text at an escaped NUL, which an id may hold.
    ///
    /// Related SQLite documentation: https://www.sqlite.org/lang_corefunc.html#hex
    package static func hexJSONArray(_ ids: some Sequence<String>) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = [UInt8(ascii: "[")]
        for id in ids {
            if text.count > 1 { text.append(UInt8(ascii: ",")) }
            text.append(UInt8(ascii: "\""))
            for byte in id.utf8 {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0F)])
            }
            text.append(UInt8(ascii: "\""))
        }
        text.append(UInt8(ascii: "]"))
        return String(decoding: text, as: UTF8.self)
    }
}
