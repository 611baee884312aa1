import Foundation
import Testing
@testable import Tandem
@testable import TandemCLI

/// SQL against Swift: for random records with adversarial values, every predicate of the corpus
/// selects in SQL exactly what `filter` selects in Swift, `count` agrees, and every sort gives
/// `sorted(using:)`'s order.
@Suite struct PredicateComparisonTests {
    static let texts = ["", "a", "A", "ab", "abc", "b", "%", "_", "\\", "'", "\"", "a%b", "a_b", "ü", "Ü", "ß", "日本", "😀", " a", "a ", "\u{1}", "null", "2.0"]
    static let ints = [Int.min, -1000, -1, 0, 1, 2, 3, 42, 1000, Int.max]
    static let reals = [-Double.greatestFiniteMagnitude, -1.5, -0.0, 0.0, 0.1, 0.30000000000000004, 2.0, 1e300, Double.leastNonzeroMagnitude]
    static let dates = [Date(timeIntervalSince1970: -1e9), Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_700_000_000.25)]

    /// Random records, seeded so that a failure repeats.
    static func records(count: Int) -> [TodoItem] {
        var random = SeededRandom(seed: 0x5eed)
        return (0..<count).map { index in
            TodoItem(
                id: String(format: "r%03d", index),
                title: texts.randomElement(using: &random)! + (Bool.random(using: &random) ? texts.randomElement(using: &random)! : ""),
                count: ints.randomElement(using: &random)!, score: reals.randomElement(using: &random)!,
                done: Bool.random(using: &random),
                note: Bool.random(using: &random) ? texts.randomElement(using: &random)! : nil,
                due: Bool.random(using: &random) ? dates.randomElement(using: &random)! : nil,
                priority: Priority.allCases.randomElement(using: &random)!,
                tag: Bool.random(using: &random) ? UUID(uuidString: "00000000-0000-4000-8000-00000000000\(index % 3)") : nil,
                attachment: nil, meta: nil, folder_id: Bool.random(using: &random) ? "f\(index % 4)" : nil)
        }
    }

    /// The corpus: each template over several captured constants.
    static var corpus: [(String, Predicate<TodoItem>)] {
        var all: [(String, Predicate<TodoItem>)] = []
        for t in ["", "a", "A", "%", "_", "\\", "'", "ü", "a%b", "ab"] {
            all.append(("title == \(t.debugDescription)", #Predicate { $0.title == t }))
            all.append(("title != \(t.debugDescription)", #Predicate { $0.title != t }))
            all.append(("title < \(t.debugDescription)", #Predicate { $0.title < t }))
            all.append(("title >= \(t.debugDescription)", #Predicate { $0.title >= t }))
            all.append(("title starts with \(t.debugDescription)", #Predicate { $0.title.starts(with: t) }))
            all.append(("title contains \(t.debugDescription)", #Predicate { $0.title.contains(t) }))
            all.append(("note == \(t.debugDescription)", #Predicate { $0.note == t }))
            all.append(("(note ?? zz) starts with \(t.debugDescription)", #Predicate { ($0.note ?? "zz").starts(with: t) }))
        }
        for n in [Int.min, -1, 0, 3, Int.max] {
            all.append(("count < \(n)", #Predicate { $0.count < n }))
            all.append(("count == \(n)", #Predicate { $0.count == n }))
            all.append(("count > \(n) && !done", #Predicate { $0.count > n && !$0.done }))
            all.append(("count <= \(n) || title starts with a", #Predicate { $0.count <= n || $0.title.starts(with: "a") }))
        }
        for (lo, hi) in [(-1, 3), (0, 0), (3, 42), (Int.min, Int.max)] {
            all.append(("\(lo)...\(hi) contains count", #Predicate { (lo...hi).contains($0.count) }))
            all.append(("\(lo)..<\(hi) contains count", #Predicate { (lo..<hi).contains($0.count) }))
        }
        for x in [-1.5, -0.0, 0.1, 2.0, 1e300] {
            all.append(("score > \(x)", #Predicate { $0.score > x }))
            all.append(("score <= \(x)", #Predicate { $0.score <= x }))
            all.append(("score == \(x)", #Predicate { $0.score == x }))
        }
        for d in dates {
            all.append(("due == \(d)", #Predicate { $0.due == d }))
            let fallback = Date(timeIntervalSince1970: 5)
            all.append(("(due ?? d) < \(d)", #Predicate { ($0.due ?? fallback) < d }))
        }
        for p in Priority.allCases {
            all.append(("priority == \(p)", #Predicate { $0.priority == p }))
            all.append(("priority != \(p) && done", #Predicate { $0.priority != p && $0.done }))
        }
        let someTitles = ["a", "ab", "%", ""], someCounts = [0, 3, Int.max], somePriorities = [Priority.low, .high]
        let someNotes: [String?] = [nil, "a"], noTitles: [String] = []
        all += [
            ("done", #Predicate { $0.done }),
            ("!done", #Predicate { !$0.done }),
            ("done == true", #Predicate { $0.done == true }),
            ("note == nil", #Predicate { $0.note == nil }),
            ("note != nil", #Predicate { $0.note != nil }),
            ("due == nil || done", #Predicate { $0.due == nil || $0.done }),
            ("tag == nil", #Predicate { $0.tag == nil }),
            ("folder_id == f1", #Predicate { $0.folder_id == "f1" }),
            ("titles contain title", #Predicate { someTitles.contains($0.title) }),
            ("counts contain count", #Predicate { someCounts.contains($0.count) }),
            ("priorities contain priority", #Predicate { somePriorities.contains($0.priority) }),
            ("notes (with nil) contain note", #Predicate { someNotes.contains($0.note) }),
            ("empty list contains title", #Predicate { noTitles.contains($0.title) }),
            ("!(count > 0 || done)", #Predicate { !($0.count > 0 || $0.done) }),
            ("(note ?? title) == a", #Predicate { ($0.note ?? $0.title) == "a" }),
            ("title.count > 2 (Swift fallback)", #Predicate { $0.title.count > 2 }),
            ("id starts with r01", #Predicate { $0.id.starts(with: "r01") }),
        ]
        // To-one relationships, through subqueries; f3 is a dangling id (no such folder).
        for name in ["a", "A", "%", ""] {
            all.append(("folder?.name == \(name.debugDescription)", #Predicate { $0.folder?.name == name }))
            all.append(("folder?.name != \(name.debugDescription)", #Predicate { $0.folder?.name != name }))
            all.append(("folder == nil || folder?.name < \(name.debugDescription)", #Predicate { $0.folder == nil || $0.folder?.name.starts(with: name) == false }))
            all.append(("folder?.name contains \(name.debugDescription) == true", #Predicate { $0.folder?.name.contains(name) == true }))
        }
        all += [
            ("folder == nil", #Predicate { $0.folder == nil }),
            ("folder != nil && !done", #Predicate { $0.folder != nil && !$0.done }),
            ("folder?.id == folder_id", #Predicate { $0.folder?.id == $0.folder_id }),
            ("folder?.name == note", #Predicate { $0.folder?.name == $0.note }),
        ]
        return all
    }

    /// The folders the records refer to (f0 to f2; f3 is dangling), with adversarial names.
    static let folders = [Folder(id: "f0", name: "a"), Folder(id: "f1", name: "%"), Folder(id: "f2", name: "")]

    /// Records as a fetch returns them: relationships loaded.
    static func loaded(_ records: [TodoItem]) -> [TodoItem] {
        records.map { record in
            var record = record
            record.folder = folders.first { $0.id == record.folder_id }
            return record
        }
    }

    @Test func sqlSelectsWhatSwiftSelects() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("p.db"), schema: recordSchema)
        let records = Self.loaded(Self.records(count: 250))
        try db.insert(contentsOf: Self.folders)
        try db.insert(contentsOf: records)
        #expect(try db.fetch(RecordQuery<TodoItem>()) == records, "fetches load the to-one relationships")
        let corpus = Self.corpus
        #expect(corpus.count >= 100)
        var translated = 0
        for (name, predicate) in corpus {
            let expected = try records.filter { try predicate.evaluate($0) }.map(\.id)
            let fetched = try db.fetch(RecordQuery(predicate)).map(\.id)
            #expect(fetched == expected, "\(name): SQL \(fetched.count) vs Swift \(expected.count)")
            if let count = try? db.count(RecordQuery(predicate)) {
                translated += 1
                #expect(count == expected.count, "\(name): count")
            }
        }
        #expect(translated == corpus.count - 1, "only the fallback predicate is untranslatable")
        #expect(
            throws: TandemError.invalidRecord(
                "TodoItem: the predicate expression $0.title.<a computed Int> cannot be translated to SQL; count, ids and delete need an SQL predicate")
        ) {
            try db.count(RecordQuery<TodoItem>(#Predicate { $0.title.count > 2 }))
        }
    }

    @Test func sqlSortsAsSwiftSorts() throws {
        let dir = try TemporaryDirectory()
        let db = try SharedDatabase(path: dir.path("s.db"), schema: recordSchema)
        let records = Self.loaded(Self.records(count: 120))
        try db.insert(contentsOf: Self.folders)
        try db.insert(contentsOf: records)
        let sorts: [(String, [SortDescriptor<TodoItem>])] = [
            ("title", [SortDescriptor(\.title)]),
            ("title reverse", [SortDescriptor(\.title, order: .reverse)]),
            ("count, score", [SortDescriptor(\.count), SortDescriptor(\.score)]),
            ("score reverse", [SortDescriptor(\.score, order: .reverse)]),
            ("count, due", [SortDescriptor(\.count), SortDescriptor(\.due)]),
            ("note (optional)", [SortDescriptor(\.note)]),
            ("due reverse", [SortDescriptor(\.due, order: .reverse)]),
            ("title lexical", [SortDescriptor(\.title, comparator: .lexical)]),
            ("folder?.name (a relationship, sorted in Swift)", [SortDescriptor(\.folder?.name), SortDescriptor(\.title)]),
        ]
        for (name, sortBy) in sorts {
            let expected = records.sorted(using: sortBy).map(\.id)
            #expect(try db.fetch(RecordQuery(sortBy: sortBy)).map(\.id) == expected, "\(name)")
            let page = Array(expected.dropFirst(7).prefix(10))
            #expect(try db.fetch(RecordQuery(sortBy: sortBy, limit: 10, offset: 7)).map(\.id) == page, "\(name), a page")
        }
    }
}

/// A small deterministic generator (SplitMix64): the one `tandem stress --seed` uses.
typealias SeededRandom = StressRandom
