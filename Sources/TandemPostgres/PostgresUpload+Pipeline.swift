import Foundation
import Tandem

/// The upload's fast path: a whole batch in one pipeline, one round trip (libpq's pipeline
/// mode) where the statement-by-statement path takes one per statement. What the other path
/// decides from an answer, the server decides here, refusing the batch with a SQLSTATE of
/// Tandem's own: an epoch older than one seen (`TD001`), a transaction applied before, a retry
/// (`TD002`), a PATCH or DELETE of a row that is not there (`TD003`). A refused batch, or one with a row
/// the server refuses, is rolled back and uploaded again by the statement-by-statement path,
/// which says what happened; so the fast path changes nothing that path decides.
///
/// Related documentation: https://www.postgresql.org/docs/15/libpq-pipeline-mode.html,
/// https://www.postgresql.org/docs/15/plpgsql-errors-and-messages.html
extension PostgresUpload {
    /// The isolation of every upload transaction, whatever the server's default: each reads
    /// the markers committed by the upload of the same client it waited for (on the client's
    /// epoch row), which a snapshot taken before that wait (`REPEATABLE READ`) would not see.
    static let isolation = "READ COMMITTED"

    /// Tandem's own SQLSTATEs (class `TD`, which PostgreSQL does not use).
    static let staleEpochState = "TD001", retryState = "TD002", missingRowState = "TD003"
    /// Raised and caught inside a server function to undo what it wrote (never reaches a client).
    static let undoneState = "TD004"

    /// The server functions the fast path calls (installed by setup).
    static let pipelineFunctions: [String] = [
        // The epoch check of every upload (``checkEpoch(_:clientID:)``): marks the transaction as
        // an upload, locks the client's epoch row (so uploads of one client take turns), refuses
        // an older epoch (the epoch seen in the detail) and records a newer one.
        """
        CREATE OR REPLACE FUNCTION tandem_upload_begin(client text, held bigint) RETURNS void LANGUAGE plpgsql SET search_path FROM CURRENT AS $f$
        DECLARE
            seen bigint;
        BEGIN
            PERFORM set_config('tandem.upload', 'on', true);
            SELECT epoch INTO seen FROM tandem_clients WHERE role = current_user AND client_id = client FOR UPDATE;
            IF held < coalesce(seen, 0) THEN
                RAISE EXCEPTION 'epoch % is older than % seen for client %', held, seen, client
                    USING ERRCODE = '\(staleEpochState)', DETAIL = seen::text;
            END IF;
            IF seen IS NULL OR seen = 0 OR held > seen THEN
                INSERT INTO tandem_clients(client_id, epoch) VALUES (client, held)
                ON CONFLICT (role, client_id) DO UPDATE SET epoch = EXCLUDED.epoch WHERE tandem_clients.epoch < EXCLUDED.epoch;
            END IF;
        END
        $f$
        """,
        """
        CREATE OR REPLACE FUNCTION tandem_refuse(state text, why text) RETURNS boolean LANGUAGE plpgsql AS $f$
        BEGIN
            RAISE EXCEPTION '%', why USING ERRCODE = state;
        END
        $f$
        """,
    ]

    /// What became of a batch sent in one round trip; unless applied, nothing of it was.
    enum OneRoundTrip {
        case applied
        /// Left to the statement-by-statement path, which says what happened: a retry, an older
        /// epoch, a PATCH or DELETE of a missing row; a table the server does not sync or a value a column
        /// cannot take, which that path refuses after its epoch check, as it always has.
        case leftToStatements
        /// The server refused a row (a constraint, a value): to be found one entry at a time.
        case rowRefused
    }

    /// Uploads `transactions` in one pipeline.
    /// - Throws: a lost connection; a failure that retrying may fix.
    func uploadInOneRoundTrip(_ transactions: [CrudTransaction], clientID: String, epoch: Int64) throws -> OneRoundTrip {
        let entries = transactions.flatMap(\.entries)
        guard entries.allSatisfy({ columns[$0.table] != nil }) else { return .leftToStatements }
        var statements: [PostgresConnection.Statement] = [
            .init(sql: PostgresConnection.begin(Self.isolation)),
            .init(sql: "SELECT tandem_upload_begin($1, $2)", parameters: [clientID, String(epoch)]),
            // The batch's marker, refusing the batch when any of it was applied before.
            markStatement(
                transactions, clientID: clientID,
                then: "SELECT tandem_refuse('\(Self.retryState)', 'transaction ' || t || ' was applied before') FROM applied LIMIT 1"),
        ]
        for run in runs(of: entries) {
            guard var statement = try? runStatement(run) else { return .leftToStatements }
            if run[0].op != .put {
                // The count as a parameter: the statement's text is the same for every run's length.
                statement.sql = """
                    WITH found AS (\(statement.sql))
                    SELECT tandem_refuse('\(Self.missingRowState)', 'a patched or deleted row is not there') FROM (SELECT count(*) AS n FROM found) c WHERE n <> $\(statement.parameters.count + 1)::bigint
                    """
                statement.parameters.append(String(run.count))
            }
            statements.append(statement)
        }
        statements.append(.init(sql: "COMMIT"))
        do {
            _ = try db.pipeline(statements)
            return .applied
        } catch let error as PostgresError where !error.isConnectionFailure {
            _ = try? db.execute("ROLLBACK")
            if [Self.staleEpochState, Self.retryState, Self.missingRowState].contains(error.sqlState ?? "") { return .leftToStatements }
            if error.isPermanent { return .rowRefused }
            throw error
        }
    }
}
