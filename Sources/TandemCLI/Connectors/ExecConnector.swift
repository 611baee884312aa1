import Foundation
import Tandem

/// A connector program in any language (`exec:PROGRAM ARGS`, a shell command line): run once per
/// call, with a request as JSON on its standard input and the action as its last argument, and
/// its answer as JSON on its standard output, like git's credential helpers. The format
/// (version 1) is ``ExecConnectorFormat``; README.md, "Your own API", shows it.
///
/// Whatever goes wrong is a failure that sync retries with backoff, the batch unchanged and
/// nothing marked uploaded that the program did not confirm: a program that cannot start, exits
/// with another status than 0, is killed at the timeout (with what it started: it runs in a
/// process group of its own), prints something that is not the format, or answers for a
/// transaction it was not given. Its first line on standard error goes into the message.
struct ExecConnector: SyncConnector {
    let command: String
    let timeout: Duration
    let pollInterval: Duration
    let retryBackoff: RetryBackoff

    var identifier: String { "exec:" + command }

    /// `TANDEM_CONNECTOR_TIMEOUT` and `TANDEM_CONNECTOR_POLL` (durations: 30s, 500ms) set the
    /// timeout (default 60 s) and the poll interval (default 5 s); `TANDEM_CONNECTOR_BACKOFF`
    /// (`INITIAL-MAXIMUM`, say `1s-60s`) the retry backoff (default 50 ms doubling to 5 s).
    init(command: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.command = command
        timeout = environment["TANDEM_CONNECTOR_TIMEOUT"].flatMap(DurationArgument.seconds).map { .seconds($0) } ?? .seconds(60)
        pollInterval = environment["TANDEM_CONNECTOR_POLL"].flatMap(DurationArgument.seconds).map { .seconds($0) } ?? .seconds(5)
        let bounds = (environment["TANDEM_CONNECTOR_BACKOFF"] ?? "").split(separator: "-").compactMap { DurationArgument.seconds(String($0)) }
        retryBackoff = bounds.count == 2 && bounds[0] > 0 ? RetryBackoff(initial: .seconds(bounds[0]), maximum: .seconds(bounds[1])) : .standard
    }

    func upload(_ batch: UploadBatch) async throws -> [UploadOutcome] {
        let answer = try await run("upload", request: ExecConnectorFormat.uploadRequest(batch))
        return try ExecConnectorFormat.outcomes(answer, batch: batch, program: identifier)
    }

    func fetchChanges(after cursor: String, limit: Int) async throws -> ChangeBatch {
        let answer = try await run("fetch", request: ExecConnectorFormat.fetchRequest(cursor: cursor, limit: limit))
        return try ExecConnectorFormat.changes(answer, cursor: cursor, program: identifier)
    }

    /// Runs the program with `action` and `request` on its standard input; its standard output.
    /// It blocks the calling thread while the program runs: the connector's own thread, where
    /// ``ConnectorBackend`` runs each call (a hop to another thread and back cost each batch
    /// more than a millisecond of the program's 30).
    private func run(_ action: String, request: String) async throws -> String {
        try ExecConnector.run(command, action, request: request, timeout: timeout)
    }

    /// ``run(_:request:)`` on the calling thread.
    static func run(_ command: String, _ action: String, request: String, timeout: Duration) throws -> String {
        let identifier = "exec:" + command
        let file = try requestFile(request, program: identifier)
        defer { close(file) }
        let child =
            if let words = plainWords(command) {
                try Subprocess.spawn(words[0], Array(words.dropFirst()) + [action], stdinFile: file, ownProcessGroup: true)
            } else {
                try Subprocess.spawn("/bin/sh", ["-c", command + " \"$@\"", "sh", action], stdinFile: file, ownProcessGroup: true)
            }
        return try finish(child, within: timeout) {
            "\(identifier) did not answer \(action) within \(timeout) (killed)"
        } failed: { status, reason in
            "\(identifier) exited with status \(status) on \(action)\(reason)"
        }
    }

    /// The standard output of `child` once it exits with status 0. Killed with what it started
    /// past `timeout` (then `late` says so), or exited otherwise (`failed` with its status and
    /// the first line of its standard error): a ``ConnectorFailure``.
    private static func finish(
        _ child: Subprocess, within timeout: Duration, late: () -> String, failed: (_ status: Int32, _ reason: String) -> String
    ) throws -> String {
        let (output, errors, finished) = collect(child, within: timeout)
        guard finished else {
            child.signalGroup(SIGKILL)
            _ = child.wait()
            throw ConnectorFailure(late())
        }
        let status = child.wait()
        guard status == 0 else { throw ConnectorFailure(failed(status, errors.split(separator: "\n").first.map { ": " + $0 } ?? "")) }
        return output
    }

    /// The words of `command` when a shell would read it as plain words (no quoting, expansion,
    /// redirection or assignment) and the first names an executable file (on `PATH` for a bare
    /// name), that executable's path first: the program then starts without a shell in between
    /// (a process fewer each call). Nil: the shell runs it.
    static func plainWords(_ command: String) -> [String]? {
        guard command.unicodeScalars.allSatisfy(plainCharacters.contains) else { return nil }
        var words = command.split(separator: " ").map(String.init)
        guard let first = words.first, !first.contains("=") else { return nil }
        let found = first.contains("/") ? (ExecutableSearch.isExecutableFile(first) ? first : nil) : ExecutableSearch.onPath(first)
        guard let executable = found else { return nil }
        words[0] = executable
        return words
    }

    private static let plainCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:@%+,=- ")

    /// `request` in a temporary file that has no name (unlinked as soon as it is made, so that
    /// nothing is left behind whatever happens next), read from its start: the program's
    /// standard input, which it may read at its own pace.
    static func requestFile(_ request: String, program: String) throws -> Int32 {
        let path = NSTemporaryDirectory() + "tandem-connector-\(getpid())-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ConnectorFailure("\(program): cannot make \(path) for its request: \(String(cString: strerror(errno)))") }
        unlink(path)
        var request = request
        let written = request.withUTF8 { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
        guard written, lseek(fd, 0, SEEK_SET) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ConnectorFailure("\(program): cannot write its request to a temporary file: \(reason)")
        }
        return fd
    }

    /// The pulls the program declares (`PROGRAM ARGS pulls`; ``ExecConnectorFormat``); none when
    /// it cannot say.
    var pulls: [PayloadPull] { (try? declaredPulls()) ?? [] }

    /// The pulls the program declares, each fetched by `PROGRAM ARGS pull` (the pull's table and
    /// scope on standard input, the payload on standard output), or from its URL.
    func declaredPulls() throws -> [PayloadPull] {
        let answer = try Self.run(command, "pulls", request: ExecConnectorFormat.pullsRequest, timeout: timeout)
        return try ExecConnectorFormat.pulls(answer, program: identifier).map { declared in
            let (command, timeout) = (command, timeout)
            let request = ExecConnectorFormat.pullRequest(declared)
            return PayloadPull(table: declared.table, scope: declared.scope, format: declared.format) {
                try await awaitBlocking {
                    if let url = declared.url { return try ExecConnector.get(url, timeout: timeout) }
                    return Data(try ExecConnector.run(command, "pull", request: request, timeout: timeout).utf8)
                }
            }
        }
    }

    /// The body of a GET of `url` (`curl`, following redirects, http and https only); an answer
    /// other than 2xx, no answer within `timeout`, or no `curl` is a ``ConnectorFailure``.
    static func get(_ url: String, timeout: Duration) throws -> Data {
        let seconds = String(format: "%.3f", min(timeout.seconds, 86_400))
        let child: Subprocess
        do {
            child = try Subprocess.spawn(
                "/usr/bin/env", ["curl", "-sS", "-f", "-L", "--proto", "=http,https", "--max-time", seconds, "--", url], ownProcessGroup: true)
        } catch {
            throw ConnectorFailure("a pull from \(url) needs curl: \(error)")
        }
        let output = try finish(child, within: timeout + .seconds(1)) {
            "a pull from \(url) got no answer within \(timeout)"
        } failed: { status, reason in
            "a pull from \(url) failed\(status == 127 ? " (is curl installed?)" : "")\(reason)"
        }
        return Data(output.utf8)
    }

    /// Reads the child's standard output and error to their end, or until `timeout` passes
    /// (then `finished` is false).
    static func collect(_ child: Subprocess, within timeout: Duration) -> (output: String, errors: String, finished: Bool) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(min(timeout.seconds, 86_400) * 1e9)
        var streams: [(fd: Int32, bytes: [UInt8], open: Bool)] = [(child.stdoutFD, [], true), (child.stderrFD, [], true)]
        defer { for stream in streams { close(stream.fd) } }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while streams.contains(where: \.open) {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return ("", "", false) }
            var fds = streams.filter(\.open).map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(1_000, (deadline - now) / 1_000_000 + 1)))
            if ready < 0 && errno == EINTR { continue }
            for polled in fds where polled.revents != 0 {
                guard let index = streams.firstIndex(where: { $0.fd == polled.fd }) else { continue }
                let n = read(polled.fd, &buffer, buffer.count)
                if n > 0 { streams[index].bytes += buffer[0..<n] } else if n == 0 || errno != EINTR { streams[index].open = false }
            }
        }
        return (String(decoding: streams[0].bytes, as: UTF8.self), String(decoding: streams[1].bytes, as: UTF8.self), true)
    }
}

extension ExecConnector {
    /// `exec:PROGRAM ARGS` as a backend kind, so that `--backend exec:…` (and `--connector`)
    /// syncs through a connector program.
    static let kind = BackendKind(
        scheme: "exec", usage: "exec:PROGRAM ARGS",
        parse: { url, _ in
            let command = String(url.dropFirst("exec:".count)).trimmingCharacters(in: .whitespaces)
            guard !command.isEmpty else { throw TandemError.invalidBackend("'\(url)' names no program (use exec:PROGRAM ARGS)") }
            return BackendURL(scheme: "exec", location: command, options: [:], name: "exec:" + command)
        },
        open: { url in ConnectorBackend(ExecConnector(command: url.location)) },
        existingIdentifier: { url in "exec:" + url.location },
        opensWithoutCreating: true)
}
