import Foundation
import Synchronization
import Tandem

enum AppCommand {
    static let command = CommandLineTool.Command(
        name: "app", summary: "run the app process: join the owner election, sync while owner",
        usage: """
            Usage: tandem app DB (--backend URL | --backend-file FILE | --connector 'exec:PROGRAM ARGS')
                              [--verify-every DURATION|off] [--pull-every DURATION|off] [--json]

            Offers this process as the sync owner of DB. While it owns sync it uploads the upload
            queue as soon as any process writes, and applies the backend's changes. Prints status
            changes (became owner, uploaded N, downloaded N, errors) until SIGINT or SIGTERM, then
            releases ownership so a stand-by takes over at once. --json prints one JSON object per line.
            If DB is deleted or replaced by another file (renamed over it), says so and exits 1.

            While it owns sync it also verifies DB against the backend every 15 minutes (tandem
            verify, by checksums; --verify-every sets the interval, off turns it off): each result
            shows in tandem status, and a drift found prints a drift_found event. With a connector
            that declares pulls, it runs them every minute (--pull-every).

            Backends: sqlite:PATH (embedded: a server database file shared by client databases; a
            relative PATH is taken from the current directory and recorded as an absolute path),
            postgres://USER@HOST/DB, or the app's own API through a connector program,
            exec:PROGRAM ARGS (README.md, "Your own API"). Keep a password off the command line, where every local user
            can read it: --backend-file FILE (the URL is its first line), TANDEM_BACKEND_URL, or
            libpq's PGPASSWORD and ~/.pgpass. One given there is hidden from ps once read, with a warning.

            Example: tandem app app.db --backend sqlite:/var/lib/app/server.db

            """, syntax: Arguments.Syntax(flags: ["json"], options: ["backend", "connector", "verify-every", "pull-every", BackendURLSource.fileOption]), hidden: false,
        stopsOnSignal: true, run: run)

    static func run(_ words: [String]) async throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        let url = try BackendURLSource.url(given: args.options["backend"], args, missing: "missing --backend URL")
        let verifyInterval = try interval(args, "verify-every", default: .seconds(900))
        let pullInterval = try interval(args, "pull-every", default: .seconds(60))
        // A signal before the session exists ends the process at once (nothing to release yet);
        // after, stopping finishes the event stream, so the loop below prints the last events and returns.
        let state = Mutex<(stopping: Bool, session: SyncSession?)>((false, nil))
        Signals.onTerminate {
            guard
                let running = state.withLock({ s -> SyncSession? in
                    s.stopping = true; return s.session
                })
            else { exitClosingDatabases(0) }
            running.stop()
        }
        let backendURL = try BackendURL(url)
        let db = try openDatabase(args.positionals[0])
        stopWhenFileIsReplaced(db, command: "app")  // a restore renames a file over it: sync the new one, not this
        let json = args.has("json")
        let session: SyncSession
        do {
            let backend = try db.sync.openBackend(backendURL)  // refused before anything is created when DB syncs with another
            session = try db.sync.start(with: backend, backendName: backendURL.name)
        } catch  where SyncFailure(error, databasePath: db.path).kind == .backendUnavailable {
            // A server that is down (or not set up yet) is opened when it can be reached.
            Output.error(
                "tandem app: the backend is unavailable for now (\(Output.line("\(error)"))); running locally, syncing once it can be reached\n")
            session = try db.sync.start(url: backendURL)
        }
        if state.withLock({ s -> Bool in
            s.session = session; return s.stopping
        }) {
            session.stop()
        }
        let verifications = verifyInterval.map { session.verifyInBackground(every: $0) }
        let pulls = pullInterval.map { session.pullInBackground(every: $0) }
        defer {
            verifications?.cancel()
            pulls?.cancel()
        }
        let pid = getpid()
        if let owner = try db.sync.status().ownerPID, owner != pid {
            emit(json ? Output.object([("event", "\"waiting\""), ("owner_pid", String(owner))]) : "waiting to own sync (owner is pid \(owner))")
        }
        for await event in session.events {
            if case .pollingForChanges(let reason) = event { Output.error("tandem app: \(Output.line(reason))\n") }
            emit(json ? jsonLine(event) : "[pid \(pid)] \(Output.line("\(event)"))")
        }
        // The session ends by itself only when sync could not go on (it says why above).
        return state.withLock { $0.stopping } ? 0 : 1
    }

    /// `--NAME DURATION|off`: the interval, nil for off, `fallback` when not given.
    private static func interval(_ args: Arguments, _ name: String, default fallback: Duration) throws -> Duration? {
        guard let text = args.options[name] else { return fallback }
        if text == "off" { return nil }
        guard let seconds = DurationArgument.seconds(text), seconds > 0 else {
            throw Arguments.UsageError(message: "--\(name) takes a duration (30s, 15m, 1h) or off, not '\(text)'")
        }
        return .seconds(min(seconds, 9e12))
    }

    private static func emit(_ line: String) {
        Output.write(line + "\n")
    }

    static func jsonLine(_ event: SyncEvent) -> String {
        switch event {
        case .becameOwner(let epoch): return Output.object([("event", "\"became_owner\""), ("epoch", String(epoch)), ("pid", String(getpid()))])
        case .uploaded(let t, let e): return Output.object([("event", "\"uploaded\""), ("transactions", String(t)), ("entries", String(e))])
        case .downloaded(let n): return Output.object([("event", "\"downloaded\""), ("changes", String(n))])
        case .fullSync(let reason): return Output.object([("event", "\"full_sync\""), ("reason", Output.jsonString(reason))])
        case .progress(let p):
            return Output.object([
                ("event", "\"progress\""), ("uploaded_entries", String(p.uploadedEntries)), ("pending_entries", String(p.pendingEntries)),
                ("downloaded_changes", String(p.downloadedChanges)), ("seconds", String(format: "%.3f", p.elapsed.seconds)),
            ])
        case .error(let failure):
            var pairs = [
                ("event", "\"error\""), ("kind", Output.jsonString(failure.kind.rawValue)),
                ("message", Output.jsonString(CommandHints.say(failure.message, remedy: failure.remedy))),
            ]
            if let table = failure.table { pairs.append(("table", Output.jsonString(table))) }
            if let rowID = failure.rowID { pairs.append(("row_id", Output.jsonString(rowID))) }
            return Output.object(pairs)
        case .lostOwnership(let m): return Output.object([("event", "\"lost_ownership\""), ("message", Output.jsonString(m))])
        case .pollingForChanges(let m): return Output.object([("event", "\"polling_for_changes\""), ("message", Output.jsonString(m))])
        case .verified(let v): return Output.object([("event", "\"verified\""), ("at", Output.jsonString(v.at.ISO8601Format()))])
        case .driftFound(let v):
            return Output.object([
                ("event", "\"drift_found\""), ("differing_rows", String(v.differingRows)),
                ("differing_tables", "[" + v.differingTables.map(Output.jsonString).joined(separator: ",") + "]"),
            ])
        case .stopped: return Output.object([("event", "\"stopped\"")])
        }
    }
}

enum SyncCommand {
    static let command = CommandLineTool.Command(
        name: "sync", summary: "run one upload-then-download pass and exit",
        usage: """
            Usage: tandem sync DB (--backend URL | --backend-file FILE | --connector 'exec:PROGRAM ARGS') [--pull] [--json]
                   tandem sync DB --wait DURATION

            Takes ownership if no process owns sync, uploads the whole upload queue, applies the
            backend's changes, releases ownership and exits. Refuses (exit 1) if another process
            owns sync, or if DB syncs with another backend (then nothing is created or changed).
            A transaction the backend refuses for good is set aside (tandem crud lists it) while
            the rest goes on; the command then says so and exits 1. A failure is recorded in the
            status, as tandem app does. With --pull and a connector program, then runs the pulls
            it declares (each table's rows as the API lists them, applied as a download) and says
            what each changed.

            With --wait, when another process owns sync, waits up to DURATION (say 30s) until it has
            uploaded every write committed so far and downloaded the server's state since, instead
            of refusing: exits 0 then, 3 when the backend refused one (set aside), 4 when DURATION
            passed first. With no owner, runs the pass itself (--backend is needed then).

            Example: tandem sync app.db --backend sqlite:/var/lib/app/server.db

            """, syntax: Arguments.Syntax(flags: ["json", "pull"], options: ["backend", "connector", "wait", BackendURLSource.fileOption]), hidden: false, run: run)

    static func run(_ words: [String]) async throws -> Int32 {
        let args = try Arguments(words, command.syntax)
        try args.require(["DB"])
        if let text = args.options["wait"] {
            guard let seconds = DurationArgument.seconds(text) else {
                throw Arguments.UsageError(message: "--wait takes a duration (500ms, 30s, 5m), not '\(text)'")
            }
            let db = try openDatabase(args.positionals[0])
            if try db.sync.status().ownerPID != nil {
                return try await ExecCommand.waitUntilSynced(db, timeout: .seconds(min(seconds, 9e12)), command: "sync")
            }
        }
        let url = try BackendURLSource.url(given: args.options["backend"], args, missing: "missing --backend URL")
        let backendURL = try BackendURL(url)
        let db = try openDatabase(args.positionals[0])
        // Refused before anything is created when DB syncs with another backend; a failure to
        // reach the backend, or a failed pass, is recorded in the status.
        let rejectedBefore = Set(try db.uploadQueue.rejected().map(\.transaction.transactionID))
        let result = try db.sync.once(url: backendURL)
        let setAside = try db.uploadQueue.rejected().filter { !rejectedBefore.contains($0.transaction.transactionID) }
        if args.has("pull") {
            guard backendURL.scheme == "exec" else {
                throw Arguments.UsageError(message: "--pull runs a connector program's pulls: use --connector 'exec:PROGRAM ARGS'")
            }
            for pull in try ExecConnector(command: backendURL.location).declaredPulls() {
                let result = try await db.sync.pull(pull)
                Output.write("pulled \(pull.table): \(result)\n")
            }
        }
        if args.has("json") {
            Output.write(
                Output.object([
                    ("uploaded_transactions", String(result.transactions)),
                    ("uploaded_entries", String(result.entries)),
                    ("downloaded", String(result.downloaded)),
                ]) + "\n")
        } else {
            Output.write("uploaded \(result.transactions) transaction(s) (\(result.entries) entries), downloaded \(result.downloaded) change(s)\n")
        }
        for rejected in setAside {
            Output.error(
                Output.line(
                    "tandem sync: set aside transaction \(rejected.transaction.transactionID), which the backend refused: \(rejected.error) (retry or discard it: tandem crud \(db.path) --retry|--discard \(rejected.transaction.transactionID))"
                ) + "\n")
        }
        return setAside.isEmpty ? 0 : 1
    }
}
