import Foundation
import Testing
@testable import TandemPostgres

/// A cursor is the client's position in the server's feed: two positions after row ids that
/// PostgreSQL keeps apart must stay apart, although Swift's `String` equality (Unicode's
/// canonical equivalence) calls some of them equal.
@Suite struct PostgresCursorTests {
    @Test(arguments: [("\u{E9}", "e\u{301}"), ("\u{212B}", "\u{C5}"), ("\u{1E9B}\u{323}", "\u{17F}\u{323}\u{307}")])
    func cursorsAfterCanonicallyEquivalentIDsStayApart(first: String, second: String) throws {
        #expect(first == second && !first.utf8.elementsEqual(second.utf8))
        var a = PostgresCursor(history: "h", snapshot: "7:9:8", grants: 0)
        a.table = "notes"
        a.afterID = first
        var b = a
        b.afterID = second
        // Each written and read again, both ways round, twice (the second time from what was remembered).
        for _ in 0..<2 {
            let (textA, textB) = (a.text, b.text)
            #expect(!textA.utf8.elementsEqual(textB.utf8))
            let (readA, readB) = (try #require(PostgresCursor(textA)), try #require(PostgresCursor(textB)))
            #expect(readA.afterID.map { Array($0.utf8) } == Array(first.utf8))
            #expect(readB.afterID.map { Array($0.utf8) } == Array(second.utf8))
        }
    }
}
