import Tandem

/// The remedies library messages suggest (``Remedy``, said as the API to call), said as the
/// `tandem` commands that do the same: every message of the library a command shows goes
/// through ``inCommandTerms(_:)``.
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

    /// `message` with each remedy it names said as a command.
    static func inCommandTerms(_ message: String) -> String {
        Remedy.allCases.reduce(message) { text, remedy in
            text.contains(remedy.apiTerms) ? text.replacingOccurrences(of: remedy.apiTerms, with: commandTerms(remedy)) : text
        }
    }
}
