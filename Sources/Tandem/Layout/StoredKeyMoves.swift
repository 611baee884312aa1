/// Renames of one table's stored JSON keys that a migration made but has not written yet.
///
/// A rename is written with the table's next fill, in the same pass over its rows, or alone
/// before any other step that reads or writes them, so that a rename followed by a fill
/// rewrites each row once. Every value is read from the row as stored before the moves, so
/// renames in a chain or a swap (`a` to `b`, `c` to `a`) each take the value they name.
struct StoredKeyMoves {
    /// Each renamed column (its name now) and the stored key that holds its value.
    private(set) var source: [String: String] = [:]
    /// The stored keys every row loses: renamed ones, and stale ones a rename writes over.
    private(set) var vacated: [String] = []

    var isEmpty: Bool { source.isEmpty && vacated.isEmpty }

    /// The stored key holding `column`'s value until the moves are written.
    func key(of column: String) -> String { source[column] ?? column }

    /// Moves column `from`'s value to the key `to`; a value a row held under `to` (a column
    /// dropped earlier keeps its values) is replaced, or removed where `from` has none.
    mutating func rename(_ from: String, to: String) {
        let stored = source.removeValue(forKey: from) ?? from
        for key in [stored, to] where !vacated.contains(key) { vacated.append(key) }
        source[to] = stored
    }

    /// The SQL expression of the stored row `data` with the moves applied, and each of `adding`'s
    /// (JSON path literal, SQL value) pairs set after them: the vacated keys removed, then each
    /// renamed column's value set from its stored key (JSON text with JSON's subtype; a key a
    /// row lacks becomes a null, which reads as NULL alike). One `json_remove` and one
    /// `json_set`: `json_patch` made the same pass twice as slow.
    func applied(to data: String, adding extra: [(path: String, value: String)] = []) -> String {
        var row = vacated.isEmpty ? data : "json_remove(\(data), \(vacated.map { SQLText.literal("$." + $0) }.joined(separator: ", ")))"
        let pairs =
            source.sorted { $0.key < $1.key }.map { "\(SQLText.literal("$." + $0.key)), \(data) -> \(SQLText.literal("$." + $0.value))" }
            + extra.map { "\($0.path), \($0.value)" }
        if !pairs.isEmpty { row = "json_set(\(row), \(pairs.joined(separator: ", ")))" }
        return row
    }
}
