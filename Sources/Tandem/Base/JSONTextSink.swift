/// Where ``JSONValue``'s compact JSON text goes as it is written: into a string
/// (``JSONValue/jsonText``), or into a digest that reads the bytes as they come and keeps no
/// text (``CrudTransaction/digest``). Package-wide: a backend writes its batches' JSON with it.
package protocol JSONTextSink {
    mutating func append(_ text: String)
    mutating func append(_ scalar: Unicode.Scalar)
}

/// JSON text written into a buffer of UTF-8 bytes (appending bytes costs less than growing a
/// `String` piece by piece), read as a string at the end.
package struct JSONText: JSONTextSink {
    private var bytes: [UInt8] = []

    package init() {}

    package var string: String { String(decoding: bytes, as: UTF8.self) }

    package mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    package mutating func append(_ scalar: Unicode.Scalar) {
        if scalar.isASCII { bytes.append(UInt8(scalar.value)) } else { bytes.append(contentsOf: UTF8.encode(scalar)!) }
    }
}

/// A 64-bit FNV-1a hash of the UTF-8 bytes written into it.
///
/// Related documentation: http://www.isthe.com/chongo/tech/comp/fnv/index.html (FNV-1a)
struct FNV1a: JSONTextSink {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func append(_ byte: UInt8) {
        value ^= UInt64(byte)
        value = value &* 0x100_0000_01b3
    }

    package mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            for byte in bytes { append(byte) }
        }
    }

    package mutating func append(_ scalar: Unicode.Scalar) {
        for byte in UTF8.encode(scalar)! { append(byte) }
    }
}
