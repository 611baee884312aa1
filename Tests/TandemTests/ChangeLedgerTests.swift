import Testing
@testable import Tandem

/// The observer's decisions, reading by reading: no files, threads or processes.
@Suite struct ChangeLedgerTests {
    typealias Reading = ChangeLedger.Reading

    @Test func theFirstReadingIsTheBaseline() {
        var ledger = ChangeLedger()
        #expect(ledger.update(with: Reading(stamps: [("ps_data__notes", 4)], dataVersion: 1)) == nil)
        #expect(ledger.lastSequence == 4)
        #expect(ledger.update(with: Reading(stamps: [], dataVersion: 1)) == nil)
    }

    @Test func otherProcessesStampsNameTheirTablesAndOwnOnesAreSkipped() {
        var ledger = ChangeLedger()
        _ = ledger.update(with: Reading(stamps: [], dataVersion: 1))
        ledger.recordOwn(5)
        let change = ledger.update(with: Reading(stamps: [("ps_data__notes", 5), ("ps_data__todos", 6)], dataVersion: 2))
        #expect(change == DatabaseChange(rawTables: ["ps_data__todos"]))
        #expect(ledger.ownSequences.isEmpty)
        #expect(ledger.update(with: Reading(stamps: [("*", 7)], dataVersion: 3)) == .unknown)
    }

    @Test func aMovedDataVersionWithoutStampsIsAForeignWriter() {
        var ledger = ChangeLedger()
        _ = ledger.update(with: Reading(stamps: [], dataVersion: 1))
        #expect(ledger.update(with: Reading(stamps: [], dataVersion: 2)) == .unknown)
        #expect(ledger.update(with: Reading(stamps: [], dataVersion: 2)) == nil)
    }

    /// A foreign commit followed by a Tandem commit: the counter is ahead of the recorded value.
    @Test func aCommitCounterAheadOfTheRecordOnceIsUnknown() {
        var ledger = ChangeLedger()
        _ = ledger.update(with: Reading(stamps: [], dataVersion: 1, recordedCommits: 10, commits: 10))
        let both = Reading(stamps: [("ps_data__todos", 3)], dataVersion: 2, recordedCommits: 10, commits: 12)
        #expect(ledger.update(with: both) == .unknown)
        #expect(ledger.update(with: Reading(stamps: [], dataVersion: 2, recordedCommits: 10, commits: 12)) == nil, "reported once")
        // A counter read before the snapshot can only lag the record, never lead it falsely.
        #expect(ledger.update(with: Reading(stamps: [("ps_data__todos", 4)], dataVersion: 3, recordedCommits: 14, commits: 13))
                == DatabaseChange(rawTables: ["ps_data__todos"]))
        // The 32-bit counter wraps.
        #expect(ledger.update(with: Reading(stamps: [], dataVersion: 3, recordedCommits: 0xffff_ffff, commits: 1)) == .unknown)
    }
}
