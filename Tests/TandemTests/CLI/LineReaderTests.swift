import Foundation
import Synchronization
import Testing
@testable import TandemCLI

/// `readLines(from:name:onLine:onEnd:)` (how `tandem demo` and the tests read children's output)
/// splits lines wherever reads cut them, keeps empty lines and a last line without its newline,
/// and reads a line longer than many reads whole.
@Suite struct LineReaderTests {
    /// The lines read from a pipe that `chunks` are written into, one write each.
    private func lines(of chunks: [[UInt8]]) throws -> [String] {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        let read = Mutex<[String]>([])
        let ended = DispatchSemaphore(value: 0)
        readLines(from: fds[0], name: "test.lines", onLine: { line, _ in read.withLock { $0.append(line) } }, onEnd: { ended.signal() })
        for chunk in chunks {
            var written = 0
            while written < chunk.count {
                let n = chunk[written...].withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
                #expect(n > 0)
                written += max(n, 0)
            }
        }
        close(fds[1])
        #expect(ended.wait(timeout: .now() + 60) == .success, "the reader ended")
        return read.withLock { $0 }
    }

    @Test func linesAreSplitWhereverReadsCutThem() throws {
        let text = Array("one\ntwo\n\nthree é\nlast without newline".utf8)
        // Every way of cutting the text in two, and the text a byte at a time.
        for cut in 0...text.count {
            #expect(try lines(of: [Array(text[..<cut]), Array(text[cut...])]) == ["one", "two", "", "three é", "last without newline"], "cut at \(cut)")
        }
        #expect(try lines(of: text.map { [$0] }) == ["one", "two", "", "three é", "last without newline"])
        // Generated: random lines, random cuts.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let expected = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                String((0..<Int.random(in: 0...30, using: &generator)).map { _ in "abc xyz\u{1}\"{}".randomElement(using: &generator)! })
            }
            var bytes = Array(expected.map { $0 + "\n" }.joined().utf8)
            var chunks: [[UInt8]] = []
            while !bytes.isEmpty {
                let size = Int.random(in: 1...max(1, bytes.count), using: &generator)
                chunks.append(Array(bytes.prefix(size)))
                bytes.removeFirst(size)
            }
            #expect(try lines(of: chunks) == expected)
        }
    }

    /// A 2 MB line (an export's JSON array is one line) and 200,000 short ones, written in
    /// 64 KB pieces.
    @Test func aLongLineAndManyShortOnesAreReadWhole() throws {
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 2 << 20)
        let short = Array((0..<200_000).map { "line \($0)\n" }.joined().utf8)
        let all = long + [10] + short
        let chunks = stride(from: 0, to: all.count, by: 65536).map { Array(all[$0..<min($0 + 65536, all.count)]) }
        let read = try lines(of: chunks)
        #expect(read.count == 200_001)
        #expect(read.first?.utf8.count == 2 << 20)
        #expect(read.last == "line 199999")
    }
}
