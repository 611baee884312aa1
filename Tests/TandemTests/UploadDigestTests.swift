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
}
