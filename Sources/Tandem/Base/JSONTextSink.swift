/// Where ``JSONValue``'s compact JSON text goes as it is written: into a string
/// (``JSONValue/jsonText``), or into a digest that reads the bytes as they come and keeps no
/// text (``CrudTransaction/digest``). Package-wide: a backend writes its batches' JSON with it.
package protocol JSONTextSink {
    mutating func append(_ text: String)
    mutating func append(_ scalar: Unicode.Scalar)
}

/// JSON text written into a string.
package struct JSONText: JSONTextSink {
    package var string = ""

    package init() {}

    package mutating func append(_ text: String) { string += text }
    package mutating func append(_ scalar: Unicode.Scalar) { string.unicodeScalars.append(scalar) }
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
