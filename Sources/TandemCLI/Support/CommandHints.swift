import Tandem

/// The remedies library messages suggest (``Remedy``, said as the API to call), said as the
/// `tandem` commands that do the same: every message of the library a command shows goes
/// through ``say(_:)`` (an error, by its remedy field) or ``inCommandTerms(_:)`` (text).
enum CommandHints {
    static func commandTerms(_ remedy: Remedy) -> String {
        switch remedy {
        case .storeSchema: "tandem init DB --schema FILE"
        case .setUpServer: "`tandem backend setup`"
        case .grantScopes: "`tandem backend grant`"
        case .resolveRejectedUpload: "tandem crud --retry or --discard"
        case .listLayoutProblems: "tandem check"
        case .stopSyncOwner: "tandem app"
        case .longerBusyTimeout: "a longer busy timeout (tandem … --busy-timeout 10m)"
        }
    }

    /// `error`'s message in the command's terms: its remedy (``Remediable``) said as a command
    /// (see ``say(_:remedy:)``).
    static func say(_ error: any Error) -> String {
        say("\(error)", remedy: (error as? any Remediable)?.remedy)
    }

    /// `message` in the command's terms: `remedy` said as its command where the message says the
    /// API, or after the message when the message does not say it at all, so that no wording of a
    /// message loses the remedy; the rest of the text as it is (data it quotes included). Without
    /// a remedy field, each remedy the text names (text that crossed SQLite, or that was stored:
    /// a set-aside upload's reason, a server audit's problem; ``inCommandTerms(_:)``).
    static func say(_ message: String, remedy: Remedy?) -> String {
        guard let remedy else { return inCommandTerms(message) }
        let command = commandTerms(remedy)
        if message.contains(remedy.apiTerms) { return message.replacingOccurrences(of: remedy.apiTerms, with: command) }
        if message.contains(command) { return message }
        return message.isEmpty ? command : message + " (\(command))"
    }

    /// `message` with each remedy it names said as a command.
    static func inCommandTerms(_ message: String) -> String {
        Remedy.allCases.reduce(message) { text, remedy in
            text.contains(remedy.apiTerms) ? text.replacingOccurrences(of: remedy.apiTerms, with: commandTerms(remedy)) : text
        }
    }
}
