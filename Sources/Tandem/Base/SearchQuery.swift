/// How a search reads its query: the user's words, or FTS5's query syntax.
///
/// Related SQLite documentation: https://www.sqlite.org/fts5.html#full_text_query_syntax
public enum SearchSyntax: Sendable, Hashable {
    /// Every word must occur, in any column, in any order; nothing in the text is syntax (quotes,
    /// `OR`, `*` and parentheses are searched as words). Control characters separate words.
    case words
    /// FTS5's syntax: phrases in double quotes, `AND`, `OR`, `NOT`, `NEAR(…)`, parentheses, `*`
    /// for a prefix, `column:` filters. Checked before it runs: a fault is refused naming its
    /// character (``TandemError/invalidSearchQuery(position:reason:)``).
    case fts5
}

/// A search query made into an FTS5 expression, or refused naming where it is wrong. Pure.
enum SearchQuery {
    /// The longest query, in UTF-8 bytes.
    static let maximumBytes = 65_536

    /// The FTS5 expression for `text` read with `syntax`, over an index of `columns`.
    /// - Throws: ``TandemError/invalidSearchQuery(position:reason:)``.
    static func expression(_ text: String, syntax: SearchSyntax, columns: [String]) throws -> String {
        guard text.utf8.count <= maximumBytes else {
            throw TandemError.invalidSearchQuery(position: nil, reason: "the query is \(text.utf8.count) bytes long; at most \(maximumBytes) are searched")
        }
        switch syntax {
        case .words:
            let words = text.split { $0.isWhitespace || $0.unicodeScalars.allSatisfy { $0.properties.generalCategory == .control } }
            guard !words.isEmpty else { throw TandemError.invalidSearchQuery(position: nil, reason: "the query has no words") }
            return words.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: " ")
        case .fts5:
            try check(Array(text), columns: columns)
            return text
        }
    }

    private static func refuse(_ index: Int?, _ reason: String) -> TandemError {
        .invalidSearchQuery(position: index.map { $0 + 1 }, reason: reason)
    }

    /// A character of an FTS5 bareword: ASCII letters and digits, `_`, U+001A, anything past ASCII.
    private static func isBareword(_ c: Character) -> Bool {
        c.unicodeScalars.allSatisfy { $0.value > 127 || $0.value == 0x1A || $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
    }

    /// Refuses what FTS5 would refuse, naming the character: an unclosed phrase or parenthesis,
    /// an operator without its phrases, a column filter of no searched column, a character that
    /// is syntax nowhere, a control character.
    private static func check(_ chars: [Character], columns: [String]) throws {
        let known = Set(columns.map { $0.lowercased() })
        var open: [Int] = []
        var wantsPhrase = true
        var lastOperator: (word: String, at: Int)?
        var i = 0
        func column(_ name: String, at index: Int) throws {
            guard known.contains(name.lowercased()) else {
                throw refuse(index, "'\(name)' is not a searched column (\(columns.joined(separator: ", ")))")
            }
        }
        while i < chars.count {
            let c = chars[i]
            // FTS5 separates words by ASCII space, tab, CR and LF only: any other space is part of
            // a word, any other control character refused.
            let separator = c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\r\n"
            if !separator, c.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw refuse(i, "the query holds a control character (U+\(String(c.unicodeScalars.first!.value, radix: 16, uppercase: true)))")
            }
            if separator || c == "," {
                i += 1
                continue
            }
            switch c {
            case "\"":
                var j = i + 1
                while true {
                    guard j < chars.count else { throw refuse(i, "the phrase in double quotes that begins here is not closed") }
                    if chars[j] == "\"" {
                        if j + 1 < chars.count, chars[j + 1] == "\"" { j += 2; continue }
                        break
                    }
                    j += 1
                }
                i = j + 1
                wantsPhrase = false
            case "(":
                open.append(i)
                wantsPhrase = true
                i += 1
            case ")":
                guard let start = open.popLast() else { throw refuse(i, "this ')' closes no '('") }
                if wantsPhrase {
                    if let lastOperator, lastOperator.at > start { throw refuse(lastOperator.at, "'\(lastOperator.word)' needs a phrase after it") }
                    throw refuse(start, "the parentheses that begin here hold no phrase")
                }
                i += 1
            case "*":
                guard !wantsPhrase else { throw refuse(i, "'*' ends a phrase (milk*: words that begin with milk); here it follows none") }
                i += 1
            case "^", "-":
                i += 1
            case "+":
                guard !wantsPhrase else { throw refuse(i, "'+' joins two phrases; here it follows none") }
                wantsPhrase = true
                i += 1
            case "{":
                guard let end = chars[i...].firstIndex(of: "}") else { throw refuse(i, "the column list that begins here is not closed with '}'") }
                var j = i + 1
                while j < end {
                    if chars[j].isWhitespace { j += 1; continue }
                    var k = j
                    while k < end, !chars[k].isWhitespace { k += 1 }
                    try column(String(chars[j..<k]), at: j)
                    j = k
                }
                guard end + 1 < chars.count, chars[end + 1] == ":" else { throw refuse(i, "a column list in braces is followed by ':' and the phrases it filters") }
                i = end + 2
                wantsPhrase = true
            default:
                guard isBareword(c) else {
                    throw refuse(i, "'\(c)' is not part of FTS5's syntax outside double quotes (put the words in quotes: \"…\")")
                }
                var j = i
                while j < chars.count, isBareword(chars[j]) { j += 1 }
                let word = String(chars[i..<j])
                if j < chars.count, chars[j] == ":" {
                    try column(word, at: i)
                    i = j + 1
                    wantsPhrase = true
                } else if ["AND", "OR", "NOT"].contains(word) {
                    guard !wantsPhrase else {
                        throw refuse(i, word == "NOT" ? "'NOT' needs a phrase before it (FTS5's NOT leaves out matches: milk NOT bread)" : "'\(word)' needs a phrase before it")
                    }
                    lastOperator = (word, i)
                    wantsPhrase = true
                    i = j
                } else if word == "NEAR", j < chars.count, chars[j] == "(" {
                    open.append(j)
                    wantsPhrase = true
                    i = j + 1
                } else {
                    wantsPhrase = false
                    i = j
                }
            }
        }
        if let start = open.last { throw refuse(start, "the '(' here is not closed") }
        if wantsPhrase {
            if let lastOperator { throw refuse(lastOperator.at, "'\(lastOperator.word)' needs a phrase after it") }
            throw refuse(nil, "the query has no words")
        }
    }
}
