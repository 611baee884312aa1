import Foundation

/// Where ``DatabaseWriter/importJSON(from:into:options:progress:)`` reads a payload: a file, an
/// open file descriptor (standard input, a pipe), or bytes in memory.
///
/// Files and descriptors are read in chunks of 1 MiB as the import goes, so a payload of any size
/// (larger than memory too) takes a bounded amount of memory: the chunk and the element being read.
public struct PayloadSource: Sendable {
    enum Kind: Sendable {
        case file(String)
        case descriptor(Int32)
        case data(Data)
    }

    let kind: Kind

    /// The file at `path`, opened and read to its end.
    public static func file(_ path: String) -> PayloadSource { PayloadSource(kind: .file(path)) }

    /// An open file descriptor, read to its end and left open (the caller owns it).
    public static func fileDescriptor(_ descriptor: Int32) -> PayloadSource { PayloadSource(kind: .descriptor(descriptor)) }

    /// Standard input, read to its end.
    public static var standardInput: PayloadSource { .fileDescriptor(STDIN_FILENO) }

    /// Bytes already in memory.
    public static func data(_ data: Data) -> PayloadSource { PayloadSource(kind: .data(data)) }
}

/// The bytes of a payload, read in chunks into one buffer that keeps the bytes from a given
/// position on (the element being read) until they are let go.
///
/// Not Sendable: one import reads it on one thread.
final class PayloadReader {
    /// Bytes read and kept: `buffer[0..<end]`; `buffer[0]` is byte ``offset`` of the payload.
    private(set) var buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var end = 0
    /// The payload offset of `buffer[0]`.
    private(set) var offset: Int64 = 0
    /// True once the source returned its last byte.
    private(set) var atEnd = false
    /// The payload's size, when the source knows it (a regular file, bytes in memory).
    let totalBytes: Int64?
    /// What is being read, for errors.
    let name: String

    private let path: String?
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let data: Data?
    private var dataPosition = 0
    private let chunk: Int

    /// The longest element the buffer grows to hold: a longer one is refused (an unterminated
    /// string would otherwise read the rest of the payload into memory).
    static let elementLimit = 64 << 20

    /// - Parameter chunk: bytes per read (tests use tiny chunks to cut elements anywhere).
    init(_ source: PayloadSource, chunk: Int = 1 << 20) throws {
        self.chunk = max(1, chunk)
        switch source.kind {
        case .file(let path):
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw SystemError(call: "open(2)", path: path, errno: errno) }
            descriptor = fd
            ownsDescriptor = true
            data = nil
            name = "'\(path)'"
            self.path = path
        case .descriptor(let fd):
            descriptor = fd
            ownsDescriptor = false
            data = nil
            name = fd == STDIN_FILENO ? "standard input" : "file descriptor \(fd)"
            path = nil
        case .data(let bytes):
            descriptor = -1
            ownsDescriptor = false
            data = bytes
            name = "the payload"
            path = nil
        }
        if let data {
            totalBytes = Int64(data.count)
        } else {
            var info = stat()
            let isFile = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
            // A file read from its current position (standard input redirected from a file).
            let position = isFile ? lseek(descriptor, 0, SEEK_CUR) : -1
            totalBytes = isFile && position >= 0 ? Int64(info.st_size) - Int64(position) : nil
        }
        buffer = .allocate(capacity: self.chunk * 2)
    }

    deinit {
        buffer.deallocate()
        if ownsDescriptor { close(descriptor) }
    }

    /// The payload bytes read so far.
    var bytesRead: Int64 { offset + Int64(end) }

    /// Lets go of the bytes before `keep`, moving the rest to the front of the buffer.
    /// - Returns: how far the kept bytes moved (positions in the buffer go down by it).
    func discard(before keep: Int) -> Int {
        guard keep > 0 else { return 0 }
        let kept = end - keep
        if kept > 0 { buffer.baseAddress!.update(from: buffer.baseAddress! + keep, count: kept) }
        end = kept
        offset += Int64(keep)
        return keep
    }

    /// Reads more bytes after `end`, growing the buffer when it is full.
    /// - Returns: false at the end of the payload.
    /// - Throws: ``SystemError`` from read(2); ``TandemError/invalidJSON(_:)`` when the kept
    ///   bytes outgrow ``elementLimit``.
    func read() throws -> Bool {
        if atEnd { return false }
        if buffer.count - end < chunk {
            guard end < Self.elementLimit else {
                throw TandemError.invalidJSON("an element of \(name) from byte \(offset) is longer than \(Self.elementLimit >> 20) MiB (or a string in it is not closed)")
            }
            let larger = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(buffer.count * 2, end + chunk))
            larger.baseAddress!.update(from: buffer.baseAddress!, count: end)
            buffer.deallocate()
            buffer = larger
        }
        let count: Int
        if let data {
            count = min(chunk, data.count - dataPosition)
            if count > 0 {
                let target = buffer.baseAddress! + end, position = dataPosition
                data.withUnsafeBytes { bytes in
                    target.update(from: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + position, count: count)
                }
                dataPosition += count
            }
        } else {
            let target = buffer.baseAddress! + end, descriptor = descriptor, chunk = chunk
            count = try syscall("read(2)", path: path) { Glibc.read(descriptor, target, chunk) }
        }
        if count == 0 {
            atEnd = true
            return false
        }
        end += count
        return true
    }
}
