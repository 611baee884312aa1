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

    /// A sequence told before a COMMIT that then failed is another process's when stamped next.
    @Test func aSequenceWhoseCommitFailedIsNotSkipped() {
        var ledger = ChangeLedger()
        _ = ledger.update(with: Reading(stamps: [], dataVersion: 1))
        ledger.recordOwn(5)
        #expect(ledger.update(with: Reading(stamps: [], dataVersion: 1)) == nil, "read before the COMMIT")
        ledger.forgetOwn(5)
        #expect(ledger.update(with: Reading(stamps: [("ps_data__notes", 5)], dataVersion: 2)) == DatabaseChange(rawTables: ["ps_data__notes"]))
    }

    @Test func aMovedDataVersionWithoutStampsIsAForeignWriter() {
        var ledger = ChangeLedger()
        _ = ledger.update(with: Reading(stamps: [], dataVersion: 1))
        #expect(ledger.update(with: Reading(stamps: [], dataVersion: 2)) == .unknown)
        #expect(ledger.update(with: Reading(stamps: [], dataVersion: 2)) == nil)
    }

    /// A foreign commit followed by a Tandem commit: the counter is ahead of the recorded value.
    @Test func aCommitCounterAheadOfTheRecordOnceIsUnknown() {
        let at = { (commits: UInt32) in WALCommitCounter.Position(salt: 7, commits: commits) }
        var ledger = ChangeLedger()
        _ = ledger.update(with: Reading(stamps: [], dataVersion: 1, recordedCommits: at(10), commits: at(10)))
        let both = Reading(stamps: [("ps_data__todos", 3)], dataVersion: 2, recordedCommits: at(10), commits: at(12))
        #expect(ledger.update(with: both) == .unknown)
        #expect(ledger.update(with: Reading(stamps: [], dataVersion: 2, recordedCommits: at(10), commits: at(12))) == nil, "reported once")
        // A counter read before the snapshot can only lag the record, never lead it falsely.
        #expect(
            ledger.update(with: Reading(stamps: [("ps_data__todos", 4)], dataVersion: 3, recordedCommits: at(14), commits: at(13)))
                == DatabaseChange(rawTables: ["ps_data__todos"]))
        // The 32-bit counter wraps.
        #expect(ledger.update(with: Reading(stamps: [], dataVersion: 3, recordedCommits: at(0xffff_ffff), commits: at(1))) == .unknown)
    }

    /// The WAL made anew (every connection closed, then reopened) counts from 0 again: the same
    /// counter value in another WAL is a foreign commit; a WAL restarted after a checkpoint (salt-1
    /// one up, the counter kept) is not.
    @Test func aWALMadeAnewIsNotMistakenForTheRecordedOne() {
        var ledger = ChangeLedger()
        let recorded = WALCommitCounter.Position(salt: 0x8000_0000, commits: 1)
        _ = ledger.update(with: Reading(stamps: [], dataVersion: 1, recordedCommits: recorded, commits: recorded))
        let restarted = WALCommitCounter.Position(salt: 0x8000_0001, commits: 1)
        #expect(
            ledger.update(with: Reading(stamps: [("ps_data__todos", 2)], dataVersion: 2, recordedCommits: recorded, commits: restarted))
                == DatabaseChange(rawTables: ["ps_data__todos"]))
        let anew = WALCommitCounter.Position(salt: 0x1234_5678, commits: 1)
        #expect(ledger.update(with: Reading(stamps: [("ps_data__todos", 3)], dataVersion: 3, recordedCommits: recorded, commits: anew)) == .unknown)
        // Read before a restart and the Tandem commit that recorded the restarted WAL: a lag.
        let lagging = WALCommitCounter.Position(salt: 0x1234_5677, commits: 4)
        let after = WALCommitCounter.Position(salt: 0x1234_5678, commits: 5)
        #expect(
            ledger.update(with: Reading(stamps: [("ps_data__todos", 4)], dataVersion: 4, recordedCommits: after, commits: lagging))
                == DatabaseChange(rawTables: ["ps_data__todos"]))
        #expect(WALCommitCounter.Position(recorded: recorded.next.recorded) == recorded.next)
        #expect(WALCommitCounter.Position(recorded: Int64(-1)) == WALCommitCounter.Position(salt: .max, commits: .max))
    }

    /// The writer's test at `BEGIN`: did any commit follow the last Tandem commit, which recorded
    /// `mark` (its position at its own `BEGIN`, the counter one up) and left 5 frames?
    @Test func aCommitSinceTheLastTandemCommitIsToldApart() {
        typealias Position = WALCommitCounter.Position
        let mark = Position(salt: 9, commits: 3)
        #expect(Position(salt: 9, commits: 3, frames: 5).follows(mark, framesAfter: 5))
        #expect(Position(salt: 9, commits: 0, frames: 5).follows(mark, framesAfter: 5), "the index rebuilt from the WAL: the counter restarts, the frames stay")
        #expect(!Position(salt: 9, commits: 3, frames: 7).follows(mark, framesAfter: 5), "a commit since, the counter back at the recorded value")
        #expect(!Position(salt: 9, commits: 4, frames: 7).follows(mark, framesAfter: 5))
        #expect(Position(salt: 10, commits: 3, frames: 2).follows(mark, framesAfter: 2), "that commit restarted the WAL")
        #expect(Position(salt: 10, commits: 3, frames: 0).follows(mark, framesAfter: 5), "a checkpoint restarted it since")
        #expect(!Position(salt: 10, commits: 4, frames: 5).follows(mark, framesAfter: 5), "restarted and written by another writer")
        #expect(!Position(salt: 11, commits: 3, frames: 5).follows(mark, framesAfter: 5), "restarted twice")
        #expect(!Position(salt: 0x5eed, commits: 3, frames: 5).follows(mark, framesAfter: 5), "a WAL made anew")
        // A commit that began with no WAL yet gave the WAL salts it could not know.
        let first = Position(salt: 0, commits: 1)
        #expect(Position(salt: 0x5eed, commits: 1, frames: 4).follows(first, framesAfter: 4))
        #expect(!Position(salt: 0x5eed, commits: 2, frames: 6).follows(first, framesAfter: 4))
        #expect(!Position(salt: 0x5eed, commits: 1, frames: 6).follows(first, framesAfter: 4), "after the index was rebuilt")
    }
}
