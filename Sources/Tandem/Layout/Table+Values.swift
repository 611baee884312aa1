/// The one rule for a value written into a declared column, as SQL: the views' triggers run it
/// for every client (Tandem, the `sqlite3` shell, any SQLite program), and ``StoredValue`` runs
/// the same expression for the values of another type that the bulk path and imports are given.
///
/// - NULL is stored as NULL. A value of the column's type is stored as it is: an integer, a
///   real bit for bit (`-0.0` too), any text.
/// - A value of another type is stored converted when the conversion is exact:
///   - `integer` column: a real with a whole value in the 64-bit range (`2.0` → 2, `-0.0` → 0,
///     `1e16`); text that SQLite reads as such a number, as a plain SQLite INTEGER column reads
///     it (`'12'`, `' 12 '`, `'007'`, `'1e3'`).
///   - `real` column: an integer that a double holds exactly (`3` → 3.0; not 2^53 + 1); text
///     that SQLite reads as a number, when that number converts exactly (`'2.5'`, `'-0.0'`).
///   - `text` column: an integer as its decimal text (`42` → `'42'`); a real as the text SQLite
///     gives it with 15 significant digits (`2.5` → `'2.5'`), when that text reads back as the
///     same real (`-0.0` as `'-0.0'`; not `0.30000000000000004`).
/// - Everything else is refused, naming the table, the column and the value: `notes.done is an
///   integer column: 2.5 (real) does not convert to an integer exactly`. BLOBs and infinite
///   reals, which JSON cannot hold, are refused in any column.
///
/// `RAISE` takes only a fixed message, so a refusal that names the value is raised by
/// `json_extract` with the message as its (invalid) path: SQLite reports `JSON path error near
/// '<message>'`, which Tandem's connections report as the message alone
/// (``ConstraintMessage/typeRefusal(in:)``), with the code `SQLITE_CONSTRAINT_DATATYPE`.
extension TableSchema {
    /// Where a generated expression runs.
    enum ExpressionContext {
        /// In a view's trigger, where `RAISE` aborts the statement with a fixed message.
        case trigger
        /// In a query Tandem runs itself, where `RAISE` cannot be used.
        case query
    }

    /// The largest finite double, above which a real is infinite.
    private static let largestReal = "1.7976931348623157e308"

    /// The value `x` is stored as in `column` (an SQL expression), or an error. Without
    /// `checkingText`, text is taken as it is (for a comparison: a value that differs is
    /// checked where it is written).
    func storedValue(_ x: String, _ column: ColumnSchema, in context: ExpressionContext = .trigger, checkingText: Bool = true) -> String {
        let refused = typeRefusal(x, column)
        let number = "CAST(\(x) AS NUMERIC)"
        // Text SQLite's numeric affinity reads as a number: unary + drops the CAST's affinity,
        // so the comparison applies numeric affinity to the text, which converts only a
        // well-formed number literal.
        let isNumberText = "+\(x) = \(number)"
        switch column.type {
        case .integer:
            return """
                CASE typeof(\(x)) WHEN 'integer' THEN \(x) WHEN 'null' THEN NULL \
                WHEN 'real' THEN (CASE WHEN abs(\(x)) > \(Self.largestReal) THEN \(infiniteRefusal(column, context)) \
                WHEN \(x) = CAST(\(x) AS INTEGER) THEN CAST(\(x) AS INTEGER) ELSE \(refused) END) \
                WHEN 'text' THEN (CASE WHEN \(isNumberText) AND \(number) = CAST(\(number) AS INTEGER) THEN CAST(\(number) AS INTEGER) ELSE \(refused) END) \
                ELSE \(blobRefusal(column, context)) END
                """
        case .real:
            return """
                CASE typeof(\(x)) WHEN 'real' THEN \(x) WHEN 'null' THEN NULL \
                WHEN 'integer' THEN (CASE WHEN \(x) = CAST(\(x) AS REAL) THEN CAST(\(x) AS REAL) ELSE \(refused) END) \
                WHEN 'text' THEN (CASE WHEN \(isNumberText) AND (typeof(\(number)) = 'real' OR \(number) = CAST(\(number) AS REAL)) \
                THEN CAST(\(x) AS REAL) ELSE \(refused) END) \
                ELSE \(blobRefusal(column, context)) END
                """
        case .text:
            return """
                CASE typeof(\(x)) WHEN 'text' THEN \(checkingText ? "(CASE WHEN \(Self.isUTF8(x)) THEN \(x) ELSE \(invalidTextRefusal(column.name, context)) END)" : x) \
                WHEN 'null' THEN NULL WHEN 'integer' THEN CAST(\(x) AS TEXT) \
                WHEN 'real' THEN (CASE WHEN abs(\(x)) > \(Self.largestReal) THEN \(infiniteRefusal(column, context)) \
                WHEN \(x) = 0 THEN (CASE WHEN atan2(\(x), -1) < 0 THEN '-0.0' ELSE '0.0' END) \
                WHEN json_extract(printf('%!.15g', \(x)), '$') = \(x) THEN printf('%!.15g', \(x)) ELSE \(refused) END) \
                ELSE \(blobRefusal(column, context)) END
                """
        }
    }

    /// The value `x` is stored as, for SQLite's JSON functions (an argument of `json_object`):
    /// ``storedValue(_:_:in:)``, a real written by ``realLiteral(_:column:)``.
    func jsonValue(_ x: String, _ column: ColumnSchema) -> String {
        guard column.type == .real else { return storedValue(x, column) }
        return "CASE typeof(\(x)) WHEN 'real' THEN json(\(realLiteral(x, column: column))) WHEN 'null' THEN NULL "
            + "ELSE json(\(convertedRealLiteral(x, column))) END"
    }

    /// ``realLiteral(_:column:)`` of the real that `x` (not a real) is stored as, converted once:
    /// `realLiteral` reads its argument up to seven times, and inlining the conversion each time
    /// made a real column's part of each of a view's triggers 9–11 KB, which every connection parses.
    private func convertedRealLiteral(_ x: String, _ column: ColumnSchema) -> String {
        "(SELECT \(realLiteral("tandem_real", column: column)) FROM (SELECT \(storedValue(x, column)) AS tandem_real))"
    }

    /// True when `stored` (an UPDATE's new value as `column` stores it) changes the stored `old`
    /// value: by value, and for reals by sign too (`-0.0` replaces `0.0`).
    func storedDiffers(_ stored: String, from old: String, _ column: ColumnSchema) -> String {
        let differs = "\(old) IS NOT \(stored)"
        guard column.type == .real else { return differs }
        return "(\(differs) OR (\(old) = 0 AND atan2(\(old), -1) <> atan2(\(stored), -1)))"
    }

    /// An UPDATE's patch member for `column`: a row (`k`: the column's name, `v`: the value as
    /// JSON text, which `json(v)` reads as ``jsonValue(_:_:)`` writes it) when the new value
    /// `new` changes the stored `old` one (by value, and for reals by sign too), else none. The
    /// column's rule is written once, in a subquery that the change test and the value both
    /// read, where each had written it out (3 KB a column in each update trigger).
    func patchMember(_ new: String, from old: String, _ column: ColumnSchema) -> String {
        let stored = "tandem_new"
        let value =
            switch column.type {
            case .integer: "json_quote(\(stored))"
            // Only a changed value is checked for UTF-8 (an unchanged one was, when it was stored).
            case .text:
                "json_quote(CASE WHEN \(stored) IS NULL OR \(Self.isUTF8(stored)) THEN \(stored) ELSE \(invalidTextRefusal(column.name, .trigger)) END)"
            case .real: "(CASE WHEN \(stored) IS NULL THEN 'null' ELSE \(realLiteral(stored, column: column)) END)"
            }
        return """
            SELECT \(SQLText.literal(column.name)) AS k, \(value) AS v FROM (SELECT \(storedValue(new, column, checkingText: false)) AS \(stored)) \
            WHERE \(storedDiffers(stored, from: old, column))
            """
    }

    /// A real as JSON text that reads back exactly.
    ///
    /// SQLite 3.40's JSON functions print reals with 15 significant digits, which does not
    /// round-trip a double, and its `printf` loses the sign of -0.0 and, with 17 digits, the last
    /// digit of some reals of very large or small magnitude. So a real is written with 15 digits
    /// when those read back as the same double (`2.5`, `0.1`), else with 18 (always exact);
    /// -0.0 as `-0.0`. An infinite real, which JSON cannot hold, aborts the statement with a
    /// message naming the column. Used in triggers only (`RAISE` needs one).
    func realLiteral(_ e: String, column: ColumnSchema, in context: ExpressionContext = .trigger) -> String {
        """
        (CASE WHEN \(e) = 0 THEN (CASE WHEN atan2(\(e), -1) < 0 THEN '-0.0' ELSE '0.0' END) \
        WHEN abs(\(e)) > \(Self.largestReal) THEN \(infiniteRefusal(column, context)) \
        WHEN json_extract(printf('%!.15g', \(e)), '$') = \(e) THEN printf('%!.15g', \(e)) ELSE printf('%!.18g', \(e)) END)
        """
    }

    /// True when the text `x` is valid UTF-8 (SQLite stores any bytes as text: `CAST(X'FF' AS
    /// TEXT)`, `char(55296)`, a file read as text), which JSON, Swift and every client read alike.
    ///
    /// Text of ASCII characters without NUL (nearly all text, two scans in C) is valid; other
    /// text is walked character by character over its bytes (RFC 3629: no overlong forms, no
    /// surrogates, nothing past U+10FFFF), a recursive query that costs about a microsecond a
    /// character.
    static func isUTF8(_ x: String) -> String {
        let bytes = "CAST(\(x) AS BLOB)"
        let continuation = { (byte: String) in "\(byte) >= X'80' AND \(byte) <= X'BF'" }
        let step = """
            (SELECT CASE WHEN b < X'80' THEN 1 \
            WHEN b >= X'C2' AND b <= X'DF' AND \(continuation("c1")) THEN 2 \
            WHEN ((b = X'E0' AND c1 >= X'A0') OR (b >= X'E1' AND b <= X'EC') OR (b = X'ED' AND c1 <= X'9F') OR (b >= X'EE' AND b <= X'EF')) \
            AND \(continuation("c1")) AND \(continuation("c2")) THEN 3 \
            WHEN ((b = X'F0' AND c1 >= X'90') OR (b >= X'F1' AND b <= X'F3') OR (b = X'F4' AND c1 <= X'8F')) \
            AND \(continuation("c1")) AND \(continuation("c2")) AND \(continuation("c3")) THEN 4 END \
            FROM (SELECT substr(\(bytes), i, 1) AS b, substr(\(bytes), i + 1, 1) AS c1, substr(\(bytes), i + 2, 1) AS c2, substr(\(bytes), i + 3, 1) AS c3))
            """
        let walk = "(WITH RECURSIVE walk(i) AS (SELECT 1 UNION ALL SELECT i + \(step) FROM walk WHERE i <= length(\(bytes))) SELECT max(i) FROM walk)"
        return "((instr(\(x), char(0)) = 0 AND \(x) NOT GLOB '*[^' || char(1) || '-' || char(127) || ']*') OR \(walk) = length(\(bytes)) + 1)"
    }

    /// The message refusing text that is not valid UTF-8 in `column`.
    func invalidTextMessage(_ column: String) -> String {
        "\(name).\(column): the text is not valid UTF-8, which no client could read back as it was stored; store text as UTF-8, or bytes as text such as hex(value)"
    }

    private func invalidTextRefusal(_ column: String, _ context: ExpressionContext) -> String {
        fixedRefusal(invalidTextMessage(column), context)
    }

    /// The message refusing a BLOB in `column`.
    func blobMessage(_ column: String) -> String {
        "\(name).\(column): a BLOB cannot be stored in a Tandem table (JSON holds no bytes); store it as text, for example hex(value) or base64"
    }

    /// The message refusing an infinite real in `column`.
    func infiniteMessage(_ column: String) -> String {
        "\(name).\(column): an infinite real cannot be stored (JSON has no representation for it)"
    }

    /// The message refusing a NaN in `column`. SQLite has no NaN (it binds one as NULL), so no
    /// trigger sees one: Tandem refuses it where it binds values (``StoredValue``, and
    /// `Statement`, which names the column by the BLOB refusal of ``blobMessage(_:)``).
    func nanMessage(_ column: String) -> String { Self.nanMessage(table: name, column: column) }

    static func nanMessage(table: String, column: String) -> String {
        "\(table).\(column): NaN (not a number) cannot be stored (JSON has no representation for it; SQLite would store NULL)"
    }

    /// The table and column a BLOB refusal (``blobMessage(_:)``) names, nil for another message.
    static func blobRefusal(in message: String) -> (table: String, column: String)? {
        let tail = ": a BLOB cannot be stored in a Tandem table"
        guard let end = message.range(of: tail), end.upperBound <= message.endIndex else { return nil }
        let head = message[..<end.lowerBound]
        guard let dot = head.firstIndex(of: "."), !head[..<dot].isEmpty, !head[head.index(after: dot)...].isEmpty else { return nil }
        return (String(head[..<dot]), String(head[head.index(after: dot)...]))
    }

    private func blobRefusal(_ column: ColumnSchema, _ context: ExpressionContext) -> String {
        fixedRefusal(blobMessage(column.name), context)
    }

    private func infiniteRefusal(_ column: ColumnSchema, _ context: ExpressionContext) -> String {
        fixedRefusal(infiniteMessage(column.name), context)
    }

    private func fixedRefusal(_ message: String, _ context: ExpressionContext) -> String {
        switch context {
        case .trigger: return "RAISE(ABORT, \(SQLText.literal(message)))"
        case .query: return "json_extract('{}', \(SQLText.literal(message)))"
        }
    }

    /// Aborts the statement with a message naming the table, the column and the value `x`.
    private func typeRefusal(_ x: String, _ column: ColumnSchema) -> String {
        let (article, target) =
            switch column.type {
            case .integer: ("an", "an integer")
            case .real: ("a", "a real")
            case .text: ("a", "text")
            }
        let head = "\(name).\(column.name) is \(article) \(column.type.rawValue) column: "
        let value = """
            CASE typeof(\(x)) WHEN 'text' THEN '"' || substr(\(x), 1, 40) || (CASE WHEN length(\(x)) > 40 THEN '…' ELSE '' END) || '"' \
            WHEN 'real' THEN printf('%!.17g', \(x)) ELSE CAST(\(x) AS TEXT) END
            """
        return "json_extract('{}', \(SQLText.literal(head)) || (\(value)) || ' (' || typeof(\(x)) || \(SQLText.literal(") does not convert to \(target) exactly")))"
    }
}
