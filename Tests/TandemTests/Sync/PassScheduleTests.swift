import Testing
@testable import Tandem

/// ``PassSchedule``, row by row: what happened (a pass began, the backend answered or announced,
/// a pass ended), then the question, and the answer.
@Suite struct PassScheduleTests {
    typealias Instant = ContinuousClock.Instant

    static let t0 = ContinuousClock.now
    static let deferral = PassSchedule.ownAnswersDeferral, gathering = PassSchedule.ownAnswersGathering

    /// What the engine tells the schedule, at `t0` plus an offset.
    enum Event {
        case began(Duration, lastQueued: Int64?)
        case firstSyncAnswered(Duration)
        case announced(Duration)
        /// The pass under way ended: downloaded (when its download began) or not, having uploaded
        /// entries or not.
        case ended(Duration, downloadBegan: Duration?, moreToUpload: Bool, uploaded: Bool = true)
        case failed
    }

    struct Row: CustomTestStringConvertible {
        var name: String
        var neverSynced = true
        var events: [Event]
        /// Asked after the uploads of the pass under way, at `t0` plus this, with this queue head.
        var askedAt: Duration
        var head: Int64?
        /// Whether the pass under way uploaded entries.
        var uploaded = true
        var downloads: Bool
        var testDescription: String { name }
    }

    static func schedule(_ neverSynced: Bool, _ events: [Event]) -> PassSchedule {
        var schedule = PassSchedule(neverSynced: neverSynced)
        for event in events {
            switch event {
            case .began(let at, let last): schedule.passBegan(at: t0 + at, lastQueued: last)
            case .firstSyncAnswered(let at): schedule.firstSyncAnswered(at: t0 + at)
            case .announced(let at): schedule.announced(at: t0 + at)
            case .ended(let at, let began, let more, let uploaded):
                _ = schedule.passEnded(at: t0 + at, pass: .init(downloadBegan: began.map { t0 + $0 }, moreToUpload: more, uploaded: uploaded))
            case .failed: schedule.passFailed()
            }
        }
        return schedule
    }

    /// A pass that began at 0 s with entries through `through` queued and downloaded (the last
    /// download, as the schedule counts it, began when its pass did), then the pass asked about.
    static func afterADownload(through: Int64?, _ more: [Event] = []) -> [Event] {
        [.began(.zero, lastQueued: through), .ended(.milliseconds(5), downloadBegan: .milliseconds(1), moreToUpload: true), .began(.milliseconds(6), lastQueued: 900)]
            + more
    }

    static let within = deferral / 2, after = deferral * 60, ms = Duration.milliseconds(1)

    static let rows: [Row] = [
        // Before the first download of a client that has never synced.
        Row(name: "no download yet: the first backlog goes up first", events: [.began(.zero, lastQueued: 100)], askedAt: ms, head: 1, downloads: false),
        Row(name: "no download yet: the first backlog's last entry is still queued", events: [.began(.zero, lastQueued: 100)], askedAt: ms, head: 100, downloads: false),
        Row(
            name: "no download yet, someone else changed something", events: [.began(.zero, lastQueued: 100), .announced(ms)], askedAt: ms * 2, head: 1,
            downloads: true),
        Row(name: "no download yet, the first backlog has gone up", events: [.began(.zero, lastQueued: 100)], askedAt: ms, head: 101, downloads: true),
        Row(name: "no download yet, nothing was queued when the owner began", events: [.began(.zero, lastQueued: nil)], askedAt: ms, head: 1, downloads: true),
        Row(name: "no download yet, the queue is empty", events: [.began(.zero, lastQueued: 100)], askedAt: ms, head: nil, downloads: true),
        Row(
            name: "a client that has synced downloads in its first pass", neverSynced: false, events: [.began(.zero, lastQueued: 100)], askedAt: ms, head: 1,
            downloads: true),
        Row(
            name: "the first sync's own answer is no news", events: [.firstSyncAnswered(.zero), .announced(.zero), .began(ms, lastQueued: 100)],
            askedAt: ms * 2, head: 1, downloads: false),
        Row(
            name: "an announcement after the first sync's answer is news",
            events: [.firstSyncAnswered(.zero), .announced(.zero), .began(ms, lastQueued: 100), .announced(ms * 2)], askedAt: ms * 3, head: 1,
            downloads: true),
        Row(
            name: "a failed first pass leaves the first backlog's rule", events: [.began(.zero, lastQueued: 100), .failed, .began(ms, lastQueued: 300)],
            askedAt: ms * 2, head: 50, downloads: false),
        // More queued, after a download.
        Row(name: "someone else changed something", events: afterADownload(through: 100, [.announced(within / 2)]), askedAt: within, head: 1, downloads: true),
        Row(name: "within the deferral", events: afterADownload(through: 100), askedAt: within, head: 500, downloads: false),
        Row(name: "the backlog's last entry is still queued", events: afterADownload(through: 100), askedAt: after, head: 100, downloads: false),
        Row(name: "the backlog has gone up", events: afterADownload(through: 100), askedAt: after, head: 101, downloads: true),
        Row(name: "nothing was queued at the last download", events: afterADownload(through: nil), askedAt: after, head: 1, downloads: true),
        Row(name: "past the deferral, the queue is empty", events: afterADownload(through: 100), askedAt: after, head: nil, downloads: true),
        Row(name: "past the deferral, someone else changed something", events: afterADownload(through: 100, [.announced(within)]), askedAt: after, head: 1, downloads: true),
        // Announcements and downloads.
        Row(
            name: "an announcement during a download outlives it",
            events: [
                .began(.zero, lastQueued: 100), .announced(ms * 2), .ended(ms * 5, downloadBegan: ms, moreToUpload: true), .began(ms * 6, lastQueued: 900),
            ], askedAt: within, head: 500, downloads: true),
        Row(
            name: "a download that began after an announcement applied it",
            events: [
                .announced(.zero), .began(ms, lastQueued: 100), .ended(ms * 5, downloadBegan: ms * 3, moreToUpload: true), .began(ms * 6, lastQueued: 900),
            ], askedAt: within, head: 500, downloads: false),
        Row(
            name: "a pass that did not download applied nothing",
            events: afterADownload(through: 100, [.announced(ms * 7), .ended(ms * 8, downloadBegan: nil, moreToUpload: true), .began(ms * 9, lastQueued: 900)]),
            askedAt: within, head: 500, downloads: true),
        // The queue emptied, after a download.
        Row(name: "the queue emptied within the gathering", events: afterADownload(through: nil), askedAt: gathering / 2, head: nil, downloads: false),
        Row(name: "the queue emptied within the gathering, a backlog before", events: afterADownload(through: 100), askedAt: gathering / 2, head: nil, downloads: false),
        Row(
            name: "the queue emptied, someone else changed something", events: afterADownload(through: nil, [.announced(ms * 7)]), askedAt: gathering / 2,
            head: nil, downloads: true),
        Row(name: "the queue emptied, the gathering is over", events: afterADownload(through: nil), askedAt: gathering, head: nil, downloads: true),
        Row(
            name: "past the gathering, within the backlog's deferral, the queue empty", events: afterADownload(through: 100),
            askedAt: (gathering + within) / 2, head: nil, downloads: true),
        Row(name: "the same with more queued", events: afterADownload(through: 100), askedAt: (gathering + within) / 2, head: 500, downloads: false),
        // A pass that uploaded nothing (another process committed a table the queue does not hold).
        Row(
            name: "nothing uploaded, nothing owed: no fetch past the gathering", events: afterADownload(through: nil), askedAt: gathering * 3,
            head: nil, uploaded: false, downloads: false),
        Row(
            name: "nothing uploaded, a pass before left its answers",
            events: afterADownload(through: nil, [.ended(ms * 8, downloadBegan: nil, moreToUpload: false), .began(ms * 9, lastQueued: nil)]),
            askedAt: gathering * 3, head: nil, uploaded: false, downloads: true),
        Row(
            name: "nothing uploaded, someone else changed something", events: afterADownload(through: nil, [.announced(ms * 7)]), askedAt: gathering / 2,
            head: nil, uploaded: false, downloads: true),
        Row(
            name: "nothing uploaded before the first download", events: [.began(.zero, lastQueued: nil)], askedAt: ms, head: nil, uploaded: false,
            downloads: true),
    ]

    @Test(arguments: rows) func thePassDownloadsOrLeavesIt(_ row: Row) {
        let schedule = Self.schedule(row.neverSynced, row.events)
        let answer = schedule.afterUploads(at: Self.t0 + row.askedAt, moreQueued: row.head != nil, uploaded: row.uploaded)
        var headRead = false
        let downloads = answer.downloads(queueHead: {
            headRead = true
            return row.head
        })
        #expect(downloads == row.downloads, "\(row.name): \(answer)")
        if case .leaveWhileHeadWithin = answer {} else { #expect(!headRead, "\(row.name): the head is read only when the answer depends on it") }
    }

    /// An announcement counts until a download that began after it: one made while a download
    /// ran (after it began) is still pending when that download ends, whatever came before it;
    /// the status's `download_pending_since` is the oldest still pending.
    @Test func anAnnouncementDuringADownloadOutlivesIt() {
        let second = Duration.seconds(1)
        var schedule = Self.schedule(false, [.began(.zero, lastQueued: nil)])
        #expect(schedule.downloadPendingSince == nil)
        schedule.announced(at: Self.t0)
        schedule.announced(at: Self.t0 + second * 2)  // during the download that began at t0 + 1
        _ = schedule.passEnded(at: Self.t0 + second * 3, pass: .init(downloadBegan: Self.t0 + second, moreToUpload: false))
        #expect(schedule.downloadPendingSince == Self.t0 + second * 2, "the later announcement is not covered")
        schedule.passBegan(at: Self.t0 + second * 3, lastQueued: nil)
        _ = schedule.passEnded(at: Self.t0 + second * 4, pass: .init(downloadBegan: nil, moreToUpload: false))
        #expect(schedule.downloadPendingSince == Self.t0 + second * 2, "a pass that did not download covers nothing")
        schedule.passBegan(at: Self.t0 + second * 4, lastQueued: nil)
        _ = schedule.passEnded(at: Self.t0 + second * 5, pass: .init(downloadBegan: Self.t0 + second * 3, moreToUpload: false))
        #expect(schedule.downloadPendingSince == nil)
    }

    @Test func theGatheringIsShorterThanTheDeferral() {
        #expect(Self.gathering < Self.deferral)
    }

    /// When a pass that left its answers ends: the pass that downloads them is due when the
    /// gathering after the last download is over.
    struct Ending: CustomTestStringConvertible {
        var name: String
        var events: [Event]
        var endedAt: Duration
        var downloadBegan: Duration?
        var moreToUpload: Bool
        var uploaded = true
        var dueIn: Duration?
        var testDescription: String { name }
    }

    static let endings: [Ending] = [
        Ending(name: "the queue emptied: due when the gathering is over", events: afterADownload(through: nil), endedAt: ms * 31, moreToUpload: false, dueIn: ms * 69),
        Ending(name: "the queue emptied past the gathering: due now", events: afterADownload(through: nil), endedAt: gathering * 3, moreToUpload: false, dueIn: .zero),
        Ending(name: "more queued: the next pass runs at once", events: afterADownload(through: nil), endedAt: ms * 31, moreToUpload: true, dueIn: nil),
        Ending(name: "the pass downloaded", events: afterADownload(through: nil), endedAt: ms * 31, downloadBegan: ms * 20, moreToUpload: false, dueIn: nil),
        Ending(name: "before the first download: none due", events: [.began(.zero, lastQueued: 100)], endedAt: ms * 31, moreToUpload: false, dueIn: nil),
        Ending(
            name: "nothing uploaded, nothing owed: none due", events: afterADownload(through: nil), endedAt: ms * 31, moreToUpload: false, uploaded: false,
            dueIn: nil),
        Ending(
            name: "nothing uploaded, a pass before left its answers: due",
            events: afterADownload(through: nil, [.ended(ms * 8, downloadBegan: nil, moreToUpload: false), .began(ms * 9, lastQueued: nil)]),
            endedAt: ms * 31, moreToUpload: false, uploaded: false, dueIn: ms * 69),
    ]

    @Test(arguments: endings) func theAnswersAreDueWhenTheGatheringIsOver(_ row: Ending) {
        var schedule = Self.schedule(true, row.events)
        let due = schedule.passEnded(
            at: Self.t0 + row.endedAt, pass: .init(downloadBegan: row.downloadBegan.map { Self.t0 + $0 }, moreToUpload: row.moreToUpload, uploaded: row.uploaded))
        #expect(due == row.dueIn, "\(row.name)")
        #expect(schedule.passHasEnded)
    }
}
