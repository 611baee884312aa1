import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// Rules of the source tree that check themselves: the library's messages name no `tandem`
/// command (they say remedies as API, ``Remedy``, and the command line says them as commands),
/// and the names of Tandem's own tables (`ps_…`) are spelled only in `Layout/`, their owner.
@Suite struct HouseRulesTests {
    static let root = packageRoot

    /// The code lines (comments left out) of every Swift file under `folder`, with their places.
    static func codeLines(under folder: String) throws -> [(place: String, line: String)] {
        let base = root.appendingPathComponent(folder)
        let files = FileManager.default.enumerator(atPath: base.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        #expect(!files.isEmpty, "no Swift files under \(folder)")
        return try files.sorted().flatMap { file in
            try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                .enumerated().compactMap { number, line in
                    let code = line.trimmingCharacters(in: .whitespaces)
                    return code.hasPrefix("//") ? nil : ("\(folder)/\(file):\(number + 1)", String(line))
                }
        }
    }

    @Test func libraryMessagesNameNoCommand() throws {
        let command = /"[^"]*\btandem (init|check|crud|backend|app|sync|status|import|export|exec|query|watch|run|backup|stress|demo|schema)\b/
        for folder in ["Sources/Tandem", "Sources/TandemPostgres"] {
            for (place, line) in try Self.codeLines(under: folder) where line.contains(command) {
                Issue.record("\(place) names a tandem command in a message: \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }

    @Test func internalTableNamesAreSpelledOnlyInTheLayout() throws {
        for (place, line) in try Self.codeLines(under: "Sources/Tandem") where !place.hasPrefix("Sources/Tandem/Layout/") && line.contains(/\bps_[a-z]/) {
            Issue.record("\(place) spells an internal name outside Layout/: \(line.trimmingCharacters(in: .whitespaces))")
        }
    }

    /// The upload queue's rows are read and changed in Layout/ (their storage), in UploadQueue/
    /// (everything else does it through there) and by the database's own write path (sealing a
    /// transaction, seeding ids), nowhere else.
    @Test func theUploadQueuesRowsAreReachedThroughUploadQueueOnly() throws {
        let allowed = ["Sources/Tandem/Layout/", "Sources/Tandem/UploadQueue/", "Sources/Tandem/Database/"]
        for (place, line) in try Self.codeLines(under: "Sources/Tandem") where line.contains("UploadQueueRows.") || line.contains("InternalTables.crud)") {
            guard !allowed.contains(where: { place.hasPrefix($0) }) else { continue }
            Issue.record("\(place) reaches the upload queue's rows outside UploadQueue/: \(line.trimmingCharacters(in: .whitespaces))")
        }
    }

    @Test func everyRemedyIsSaidAsACommand() {
        for remedy in Remedy.allCases {
            let said = CommandHints.inCommandTerms("do this: \(remedy.apiTerms).")
            #expect(said == "do this: \(CommandHints.commandTerms(remedy)).")
            #expect(said.contains("tandem ") && !said.contains(remedy.apiTerms), "\(remedy)")
        }
    }
}
