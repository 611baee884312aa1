import Foundation
import Tandem

/// The server side of the schema's type changes (``Migration/Step/changeType(table:column:to:using:)``):
/// `tandem backend setup` with the new schema converts the server's column in place, by the
/// rule a host's migration converts its own values with (``ColumnSchema``'s exact conversions),
/// so that the server and every migrated host hold the same values.
///
/// A host on the old release keeps syncing meanwhile: it reads the converted values through its
/// own column's type, and its uploads of the old type are converted by the same rule on the way
/// in (``PostgresValues``), or refused and set aside, naming the column, when they do not
/// convert. A server value that does not convert refuses the setup, naming its row, before
/// anything changes. The rule is kept on the safe side where SQLite's reading of a number could
/// differ from PostgreSQL's (text of more than 17 significant digits, an integer above 2^53
/// written with a fraction or exponent): such a value is refused, never converted otherwise.
///
/// Related documentation: https://www.postgresql.org/docs/current/sql-altertable.html
enum PostgresTypeChanges {
    /// The function that converts one value (as its exact text) from one Tandem type to another,
    /// returning the new value's text, or NULL when it does not convert exactly.
    static let function = """
        CREATE OR REPLACE FUNCTION tandem_convert(v text, from_type text, to_type text) RETURNS text
        LANGUAGE plpgsql IMMUTABLE SET extra_float_digits = 1 SET search_path FROM CURRENT AS $f$
        DECLARE
            n numeric;
            d float8;
            fractional boolean := v ~ '[.eE]';
        BEGIN
            IF v IS NULL OR from_type = to_type THEN RETURN v; END IF;
            IF from_type = 'text' THEN
                -- A number literal as SQLite's numeric affinity reads one, nothing else.
                IF v !~ '^[ \\t\\n\\v\\f\\r]*[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?[ \\t\\n\\v\\f\\r]*$' THEN RETURN NULL; END IF;
                IF length(regexp_replace(regexp_replace(v, '[eE].*$', ''), '[^0-9]', '', 'g')) > 17 AND fractional THEN RETURN NULL; END IF;
                BEGIN
                    n := btrim(v, E' \\t\\n\\v\\f\\r')::numeric;
                EXCEPTION WHEN others THEN
                    RETURN NULL;
                END;
                IF to_type = 'integer' THEN
                    IF n <> trunc(n) OR n < -9223372036854775808 OR n > 9223372036854775807 THEN RETURN NULL; END IF;
                    IF fractional AND abs(n) > 9007199254740992 THEN RETURN NULL; END IF;
                    RETURN n::bigint::text;
                END IF;
                BEGIN
                    d := btrim(v, E' \\t\\n\\v\\f\\r')::float8;
                EXCEPTION WHEN others THEN
                    RETURN NULL;  -- beyond a double's range either way
                END;
                -- An integer's text: a double must hold it exactly (compared as integers: a
                -- double's numeric is rounded to 15 digits).
                IF NOT fractional AND (n < -9223372036854775808 OR n > 9223372036854775807 OR d >= 9223372036854775808 OR d::bigint <> n::bigint) THEN
                    RETURN NULL;
                END IF;
                RETURN d::text;
            ELSIF from_type = 'integer' THEN
                d := v::float8;
                IF to_type = 'real' AND (d >= 9223372036854775808 OR d::bigint <> v::bigint) THEN RETURN NULL; END IF;
                RETURN v;
            END IF;
            d := v::float8;
            IF d = 'NaN'::float8 OR d = 'Infinity'::float8 OR d = '-Infinity'::float8 THEN RETURN NULL; END IF;
            IF to_type = 'integer' THEN
                IF d <> trunc(d) OR d < -9223372036854775808 OR d >= 9223372036854775808 THEN RETURN NULL; END IF;
                RETURN d::bigint::text;
            END IF;
            -- Text: SQLite's printf('%!.15g'), when it reads back as the same real.
            v := tandem_real_text15(d);
            IF v::float8 <> d THEN RETURN NULL; END IF;
            RETURN v;
        END
        $f$
        """

    /// A real as SQLite's `printf('%!.15g')` writes it: 15 significant digits, with a `.0` where
    /// the digits have no point (`2.0`, `1.0e+16`, `-0.0`).
    static let realText = """
        CREATE OR REPLACE FUNCTION tandem_real_text15(d float8) RETURNS text
        LANGUAGE plpgsql IMMUTABLE SET extra_float_digits = 0 AS $f$
        DECLARE t text := d::text;
        BEGIN
            IF t ~ '[.]' THEN RETURN t; END IF;
            IF t ~ 'e' THEN RETURN regexp_replace(t, 'e', '.0e'); END IF;
            RETURN t || '.0';
        END
        $f$
        """

    /// The Tandem type of a server column type (`format_type`'s spelling), if it is one.
    static func tandemType(_ serverType: String) -> ColumnSchema.ColumnType? {
        [ColumnSchema.ColumnType.text, .integer, .real].first { PostgresSetup.sqlType($0) == serverType }
    }

    /// The migration of `schema` that changes `column` of `table` to `type`, if one does.
    static func migration(changing column: String, of table: String, to type: ColumnSchema.ColumnType, in schema: Schema) -> Migration? {
        PostgresMigrationSteps.entries(of: schema).last { entry in
            guard case .changeType(_, let changed, let to, _) = entry.step else { return false }
            return entry.table == table && changed == column && to == type
        }?.migration
    }

    /// Converts `column` of `table` from the server's `serverType` to `type` as `migration`
    /// declares: every value, or none (naming the first row whose value does not convert).
    static func convert(
        _ column: String, of table: String, from serverType: String, to type: ColumnSchema.ColumnType, by migration: Migration, on connection: PostgresConnection
    ) throws {
        guard let from = tandemType(serverType) else {
            throw PostgresError(
                "table \(table) exists but its column \(column) is \(serverType), which migration '\(migration.id)' cannot convert to \(PostgresSetup.sqlType(type))")
        }
        let name = SQLText.identifier(table), quoted = SQLText.identifier(column)
        let converted = "tandem_convert(\(quoted)::text, \(SQLText.literal(from.rawValue)), \(SQLText.literal(type.rawValue)))"
        if let row = try connection.execute("SELECT id, left(\(quoted)::text, 60) FROM \(name) WHERE \(quoted) IS NOT NULL AND \(converted) IS NULL ORDER BY id LIMIT 1").first {
            let using = migration.steps.contains { if case .changeType(_, let c, _, let using?) = $0, c.lowercased() == column.lowercased() { !using.isEmpty } else { false } }
            throw PostgresError(
                "table \(table) row '\(row[0] ?? "")': column \(column) holds \(row[1].map { "'\($0)'" } ?? "NULL"), which does not convert to \(PostgresSetup.sqlType(type)) exactly as migration '\(migration.id)' changes its type"
                    + (using ? " (its `using` expression is SQLite's, which the server cannot run)" : "")
                    + "; change the row on the server, then run setup again")
        }
        try connection.execute("ALTER TABLE \(name) ALTER COLUMN \(quoted) TYPE \(PostgresSetup.sqlType(type)) USING \(converted)::\(PostgresSetup.sqlType(type))")
    }
}
