/// A table's full-text search index (``TableSchema/search``): the text columns it indexes and how
/// their text is split into words, with SQLite's FTS5. The index is kept in the same write
/// transaction as every change to the table's rows, whatever made it (records, SQL through the
/// view, downloads, imports, the `sqlite3` shell, migrations), so a search always sees the rows
/// as they are. In JSON: `"search": {"columns": ["title", "body"], "tokenizer": "porter"}`
/// (`tokenizer` may be left out).
///
/// Related SQLite documentation: https://www.sqlite.org/fts5.html
public struct SearchIndex: Codable, Sendable, Equatable {
    /// How text is split into the words a search matches (FTS5's tokenizers).
    public enum Tokenizer: String, Codable, Sendable, CaseIterable {
        /// Words of Unicode letters and digits, case-folded, diacritics removed: "Crème" matches
        /// "creme". FTS5's `unicode61 remove_diacritics 2`.
        case unicode61
        /// ``unicode61`` with English stemming: "running" matches "run". FTS5's `porter`.
        case porter
        /// Every three characters: any substring of three characters or more matches, case-folded
        /// ("ilk" finds "milk"). FTS5's `trigram`.
        case trigram

        /// The `tokenize` option of the FTS5 table.
        var option: String {
            switch self {
            case .unicode61: "unicode61 remove_diacritics 2"
            case .porter: "porter unicode61 remove_diacritics 2"
            case .trigram: "trigram"
            }
        }
    }

    /// The text columns searched, in the order of their index in a search (`col:` filters and
    /// snippets name them).
    public var columns: [String]
    /// How their text is split into words.
    public var tokenizer: Tokenizer

    public init(columns: [String], tokenizer: Tokenizer = .unicode61) {
        self.columns = columns
        self.tokenizer = tokenizer
    }

    enum CodingKeys: String, CodingKey { case columns, tokenizer }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(["columns", "tokenizer"], in: "search")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        columns = try c.decode([String].self, forKey: .columns)
        let raw = try c.decodeIfPresent(String.self, forKey: .tokenizer) ?? Tokenizer.unicode61.rawValue
        guard let tokenizer = Tokenizer(rawValue: raw) else {
            throw TandemError.invalidSchema(
                SchemaProblem(
                    .invalidSearch, "search: unknown tokenizer '\(raw)' (use \(Tokenizer.allCases.map(\.rawValue).joined(separator: ", ")))"))
        }
        self.tokenizer = tokenizer
    }
}
