import Foundation

/// What a stress run saw, saved beside the database as `<DB>.stress-log.json` so that
/// `tandem stress DB --verify` can check the files again later.
struct StressLog: Codable, Equatable {
    var writers: Int
    var transactions: Int
    var rowsPerTransaction: Int
    /// The second client database, when the run used a backend.
    var peer: String?
    /// The backend URL, when the run used one.
    var backend: String?
    /// Per writer (index = writer number), the transaction numbers the writer reported committed.
    var committed: [[Int]]

    static func path(for database: String) -> String { database + ".stress-log.json" }

    func save(to database: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: StressLog.path(for: database)))
    }

    static func load(for database: String) throws -> StressLog {
        let path = StressLog.path(for: database)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StressError.noLog(path)
        }
        do { return try JSONDecoder().decode(StressLog.self, from: data) } catch {
            throw StressError.badLog(path, "\(error)")
        }
    }
}

enum StressError: Error, CustomStringConvertible {
    case noLog(String)
    case badLog(String, String)
    case notNew(String)
    case timeout(String)

    var description: String {
        switch self {
        case .noLog(let path): return "no stress log at '\(path)': run `tandem stress` on this database first"
        case .badLog(let path, let why): return "the stress log '\(path)' cannot be read: \(why)"
        case .notNew(let path): return "'\(path)' already exists; tandem stress writes into a new database file (use --verify to check an earlier run)"
        case .timeout(let what): return "timed out: \(what)"
        }
    }
}
