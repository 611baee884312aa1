/// A connection's named prepared statements: a statement with parameters that the connection
/// runs a second time is prepared (parsed and analysed once, and planned once PostgreSQL finds
/// its generic plan as good as the custom ones) and from then on executed by name. Tandem's
/// statements are the same text every time (values travel as parameters), so an upload's and a
/// fetch's few statements are parsed, analysed and mostly planned once per connection instead
/// of every round trip: at a commit every 2 ms, about half of the server processes' CPU.
/// Statements seen once are never prepared, and at most ``capacity`` are.
///
/// Where named statements cannot last (a pooler in transaction mode hands each transaction
/// another server session: SQLSTATE 26000, the name is unknown there), the connection stops
/// preparing; a statement whose result's columns changed under it (SQLSTATE 0A000, "cached
/// plan must not change result type", after the server's tables were upgraded) is prepared
/// anew under another name. Both failures are transient: the caller's retry runs unprepared.
/// Names are unique to the connection (a random part, then a number): in a session that a
/// pooler handed over from another client, no name can be that client's, so a statement can
/// never run another one's text, and a prepare never collides with a name there (SQLSTATE
/// 42P05, which would count as permanent).
///
/// Pure bookkeeping: ``PostgresConnection`` sends what it says.
///
/// Related documentation: https://www.postgresql.org/docs/15/sql-prepare.html (plans: "Notes"),
/// https://www.postgresql.org/docs/15/libpq-exec.html#LIBPQ-PQPREPARE
struct PostgresPreparedStatements {
    /// How a statement is sent.
    enum Use: Equatable {
        /// As an unnamed statement (parsed and planned for this execution only).
        case unnamed
        /// Prepared under the name, then executed by it, in the same round trip; the name holds
        /// once the server answered the prepare (``prepared(_:as:succeeded:)``).
        case prepare(String)
        /// Executed by the name it was prepared under.
        case execute(String)
    }

    /// At most this many statements are prepared on one connection.
    static let capacity = 100
    /// At most this many statements seen once are remembered (then forgotten together).
    static let seenCapacity = 1000

    private(set) var names: [String: String] = [:]
    private var seenOnce: Set<String> = []
    private var pending: [String: String] = [:]
    private var nextNumber = 0
    /// Every name's start: `tandem_`, 16 random hexadecimal digits and `_` (names stay within
    /// PostgreSQL's 63 bytes).
    let namePrefix = "tandem_" + String(UInt64.random(in: .min ... .max) | 1 << 63, radix: 16) + "_"
    /// False once the server forgot a name (a pooler): nothing is prepared on this connection again.
    private(set) var isEnabled = true

    /// How to send `sql` now (with `parameterCount` parameters).
    mutating func use(for sql: String, parameterCount: Int) -> Use {
        guard isEnabled, parameterCount > 0 else { return .unnamed }
        if let name = names[sql] { return .execute(name) }
        if let name = pending[sql] { return .execute(name) }  // prepared earlier in the same pipeline
        guard names.count + pending.count < Self.capacity, seenOnce.contains(sql) else {
            if seenOnce.count >= Self.seenCapacity { seenOnce.removeAll() }
            seenOnce.insert(sql)
            return .unnamed
        }
        seenOnce.remove(sql)
        nextNumber += 1
        let name = namePrefix + String(nextNumber)
        pending[sql] = name
        return .prepare(name)
    }

    /// The server answered the prepare of `sql` as `name`: success or not.
    mutating func prepared(_ sql: String, as name: String, succeeded: Bool) {
        guard pending[sql] == name else { return }
        pending[sql] = nil
        if succeeded, isEnabled { names[sql] = name }
    }

    /// A statement failed with `sqlState`: a name the server does not know stops preparing on
    /// this connection; a plan whose result changed is dropped, to be prepared anew.
    mutating func failed(_ sql: String, sqlState: String?) {
        switch sqlState {
        case "26000":
            isEnabled = false
            names.removeAll()
            pending.removeAll()
        case "0A000":
            names[sql] = nil
        default:
            break
        }
    }
}
