import Testing
@testable import Tandem

/// The upload digest tells a retry (same entries) from other entries under a reused id.
@Suite struct UploadDigestTests {
    @Test func theDigestDependsOnEveryEntryAndTheirKinds() {
        func transaction(_ data: [String: JSONValue]) -> CrudTransaction {
            CrudTransaction(transactionID: 1, entries: [CrudEntry(id: 1, transactionID: 1, op: .put, table: "notes", rowID: "a", data: data)])
        }
        let base = transaction(["n": .integer(2)]).digest
        #expect(transaction(["n": .integer(2)]).digest == base)
        #expect(transaction(["n": .double(2.0)]).digest != base, "2 and 2.0 are different writes")
        #expect(transaction(["n": .string("2")]).digest != base)
        #expect(transaction([:]).digest != base)
    }

    /// Entries with adversarial values and keys, whose digests earlier releases stored on servers.
    static let pinned: [CrudEntry] = [
        CrudEntry(
            id: 1, transactionID: 7, op: .put, table: "notes", rowID: "a",
            data: [
                "max": .integer(.max), "min": .integer(.min), "two": .double(2.0), "negativeZero": .double(-0.0),
                "long": .double(0.1 + 0.2), "tiny": .double(.leastNonzeroMagnitude), "none": .null, "yes": .bool(true),
            ]),
        CrudEntry(
            id: 2, transactionID: 7, op: .patch, table: "n\u{0}tes", rowID: "\u{1}\t\n\r\u{1b}\u{7f}\"\\",
            data: [
                "text": .string("{\"x\":1}"), "Z": .string("null"), "é": .string("😀 Ünïcödé ☃ \u{301}e"), "e": .string("\u{0}"),
                "a": .array([.integer(1), .string("b"), .object(["k": .double(-1.5)])]),
            ]),
        CrudEntry(id: 3, transactionID: 7, op: .delete, table: "notes", rowID: "", data: nil),
    ]

    /// The digest is FNV-1a over each entry's JSON text and a newline, written as it always was:
    /// these values were computed by the release before the digest was hashed as it is written.
    @Test func digestsOfEarlierReleasesStillMatch() {
        #expect(CrudTransaction(transactionID: 7, entries: Self.pinned).digest == "481e016dd5b36e18")
        #expect(Self.pinned.map { CrudTransaction(transactionID: 7, entries: [$0]).digest } == ["85b2fa9eec43952d", "cdb25c9e8e4507fa", "c0e156c5ab87ea45"])
    }

    /// For generated entries, the digest is FNV-1a over the text ``CrudEntry/jsonText`` gives, and
    /// that text is the entry's members as one ``JSONValue`` object.
    @Test func theDigestHashesTheEntriesText() {
        var generator = SystemRandomNumberGenerator()
        let values: [JSONValue] = [
            .integer(.max), .integer(.min), .integer(0), .double(2.0), .double(-0.0), .double(123456789.12345678), .double(Double("1e-320")!),
            .string(""), .string("\u{0}"), .string("\u{1}\u{1f}\u{7f}"), .string("\"\\/"), .string("{\"a\":[1]}"), .string("ü\u{308}😀"),
            .null, .bool(false), .array([.null, .integer(3)]), .object(["b": .integer(1), "a": .string("x")]),
        ]
        let keys = ["a", "B", "é", "e", "z", "_", "data", "id", "0"]
        for round in 0..<300 {
            let entries = (0..<Int.random(in: 1...3, using: &generator)).map { index -> CrudEntry in
                let op = [CrudEntry.Operation.put, .patch, .delete].randomElement(using: &generator)!
                let data =
                    op == .delete
                    ? nil
                    : Dictionary(
                        keys.filter { _ in Bool.random(using: &generator) }.map { ($0, values.randomElement(using: &generator)!) },
                        uniquingKeysWith: { a, _ in a })
                return CrudEntry(
                    id: Int64(index), transactionID: 1, op: op, table: keys.randomElement(using: &generator)!,
                    rowID: values.compactMap { if case .string(let s) = $0 { s } else { nil } }.randomElement(using: &generator)!, data: data)
            }
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for entry in entries {
                var members: [String: JSONValue] = ["op": .string(entry.op.rawValue), "type": .string(entry.table), "id": .string(entry.rowID)]
                if let data = entry.data { members["data"] = .object(data) }
                #expect(entry.jsonText == JSONValue.object(members).jsonText, "round \(round)")
                for byte in Array(entry.jsonText.utf8) + [0x0a] {
                    hash ^= UInt64(byte)
                    hash = hash &* 0x100_0000_01b3
                }
            }
            #expect(CrudTransaction(transactionID: 1, entries: entries).digest == String(hash, radix: 16), "round \(round)")
        }
    }
}
