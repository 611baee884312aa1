import CCrypto
import Foundation

/// One row's digest for ``DatabaseSync/verify(with:repair:tables:)``: the MD5 of the row's
/// canonical encoding, and the bucket its id falls in.
///
/// The canonical encoding (DESIGN.md, "Verification") is the row's id and then each declared
/// column's value, in the order of the declared columns sorted by their names' bytes, each as
/// the views show it (SQLite) or the typed column holds it (PostgreSQL):
/// - NULL: `n`;
/// - an integer: `i` and its decimal digits (`-` first when negative);
/// - a real: `r` and the 16 lower-case hexadecimal digits of its IEEE 754 bits, most significant
///   first (PostgreSQL's `encode(float8send(x), 'hex')`), so `-0.0` and every last bit count;
/// - text (and the id): `t`, its length in UTF-8 bytes in decimal, `:`, and its UTF-8 bytes with
///   each NUL written as U+FFFF `0` and each U+FFFF as two of them (the PostgreSQL backend's form
///   of text, which cannot hold NUL).
///
/// Each part ends where the next begins (a tag letter after digits, a fixed length, a byte
/// count), so two different rows never encode alike. The digest's first eight bytes are two
/// unsigned 32-bit numbers, summed into a ``RowChecksum``; the id's own MD5 picks the bucket.
///
/// Related documentation: https://www.postgresql.org/docs/15/functions-string.html (`md5`),
/// https://www.postgresql.org/docs/15/functions-binarystring.html (`encode`)
public struct RowDigest: Hashable, Sendable {
    public var id: String
    /// The first four bytes of the MD5 of the id's encoding, big-endian: the bucket is this
    /// number modulo the bucket count (a power of two).
    public var idHash: UInt32
    /// The first and the next four bytes of the MD5 of the row's encoding, big-endian.
    public var first: UInt32
    public var second: UInt32

    /// The digest of the row `id` whose declared columns, sorted by name, hold `values`.
    /// - Throws: ``TandemError/verificationFailed(_:)`` when libcrypto (Debian's `libssl3`) cannot be loaded.
    public init(id: String, values: [DatabaseValue]) throws {
        var idBytes: [UInt8] = []
        RowDigest.appendText(id, to: &idBytes)
        self.id = id
        idHash = try RowDigest.md5Prefix(idBytes).0
        (first, second) = try RowDigest.valueHash(id: id, values: values)
    }

    /// The digest's two numbers alone (``first`` and ``second``), without the id's hash: what a
    /// whole table's checksum needs.
    public static func valueHash(id: String, values: [DatabaseValue]) throws -> (UInt32, UInt32) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        appendText(id, to: &bytes)
        for value in values { append(value, to: &bytes) }
        return try md5Prefix(bytes)
    }

    /// The hash of `id` that picks its bucket (``idHash``).
    public static func idHash(of id: String) throws -> UInt32 {
        var bytes: [UInt8] = []
        appendText(id, to: &bytes)
        return try md5Prefix(bytes).0
    }

    public init(id: String, idHash: UInt32, first: UInt32, second: UInt32) {
        self.id = id
        self.idHash = idHash
        self.first = first
        self.second = second
    }

    /// The bucket of ``idHash`` among `count` (a power of two).
    public func bucket(of count: Int) -> Int { Int(idHash & UInt32(truncatingIfNeeded: count - 1)) }

    /// The canonical encoding of `value`, appended to `bytes`.
    static func append(_ value: DatabaseValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(UInt8(ascii: "n"))
        case .integer(let integer):
            bytes.append(UInt8(ascii: "i"))
            bytes += String(integer).utf8
        case .real(let real):
            bytes.append(UInt8(ascii: "r"))
            let hex = String(real.bitPattern, radix: 16)
            bytes += repeatElement(UInt8(ascii: "0"), count: 16 - hex.utf8.count)
            bytes += hex.utf8
        case .text(let text): appendText(text, to: &bytes)
        case .blob(let data):
            // Tandem's columns hold no blobs; one written behind its back differs from any text.
            bytes.append(UInt8(ascii: "b"))
            bytes += String(data.count).utf8
            bytes.append(UInt8(ascii: ":"))
            bytes += data
        }
    }

    private static func appendText(_ text: String, to bytes: inout [UInt8]) {
        let escaped = Array(escaped(text).utf8)
        bytes.append(UInt8(ascii: "t"))
        bytes += String(escaped.count).utf8
        bytes.append(UInt8(ascii: ":"))
        bytes += escaped
    }

    /// `text` with each NUL as U+FFFF `0` and each U+FFFF doubled: the PostgreSQL backend's
    /// stored form of text.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "\0" || $0 == "\u{FFFF}" }) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\0": result.append(contentsOf: ["\u{FFFF}", "0"])
            case "\u{FFFF}": result.append(contentsOf: ["\u{FFFF}", "\u{FFFF}"])
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    private static func md5Prefix(_ bytes: [UInt8]) throws -> (UInt32, UInt32) {
        var digest = [UInt8](repeating: 0, count: 16)
        let status = bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { tandem_md5(input.baseAddress, input.count, $0.baseAddress) }
        }
        guard status == 0 else {
            throw TandemError.verificationFailed("verification needs libcrypto.so.3 (Debian's libssl3 package), which cannot be loaded")
        }
        let first = digest[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let second = digest[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return (first, second)
    }
}

/// An order-independent checksum of a set of rows: how many, and the sums of their digests'
/// two numbers (``RowDigest``). Two sets of rows with equal checksums hold the same rows, but
/// for a chance of about one in 2^64.
public struct RowChecksum: Hashable, Sendable {
    public var count: Int64 = 0
    public var first: Int64 = 0
    public var second: Int64 = 0

    public init(count: Int64 = 0, first: Int64 = 0, second: Int64 = 0) {
        self.count = count
        self.first = first
        self.second = second
    }

    /// Adds one row.
    public mutating func add(_ digest: RowDigest) {
        add(digest.first, digest.second)
    }

    /// Adds one row by its digest's two numbers (``RowDigest/valueHash(id:values:)``).
    public mutating func add(_ first: UInt32, _ second: UInt32) {
        count += 1
        self.first &+= Int64(first)
        self.second &+= Int64(second)
    }
}

extension RowChecksum {
    /// The checksums per bucket (of `bucketCount`, a power of two) of the rows `digests`;
    /// buckets without rows are left out.
    public static func buckets(of digests: some Sequence<RowDigest>, count bucketCount: Int) -> [Int: RowChecksum] {
        var buckets: [Int: RowChecksum] = [:]
        for digest in digests { buckets[digest.bucket(of: bucketCount), default: RowChecksum()].add(digest) }
        return buckets
    }
}
