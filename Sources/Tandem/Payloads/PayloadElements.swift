/// The elements of a payload, one at a time, as they are read: the objects of one JSON array,
/// or newline-delimited objects (``PayloadFormat``).
///
/// Each element is found by its brackets (outside strings) and handed over as bytes of the
/// reader's buffer; parsing them is the caller's. Only the element being handed over is kept in
/// memory, so a payload of any size is read in bounded memory.
struct PayloadElements {
    let reader: PayloadReader
    let format: PayloadFormat
    /// The next byte to look at in the reader's buffer.
    private var position = 0
    /// Newlines passed between tokens (strings hold none), for the line of an element.
    private var newlines = 0
    private var started = false
    private var finished = false
    /// Elements handed over so far.
    private(set) var count = 0

    init(reader: PayloadReader, format: PayloadFormat) {
        self.reader = reader
        self.format = format
    }

    /// An element: `reader.buffer[start..<end]`, valid until the next call of ``next()``.
    struct Element {
        let start: Int
        let end: Int
        let index: Int
        /// The line it starts on (1-based).
        let line: Int

        /// How errors name it: `[3]`, and its line for newline-delimited payloads.
        func place(_ format: PayloadFormat) -> String { format == .ndjson ? "[\(index)] (line \(line))" : "[\(index)]" }
    }

    /// The next element, or nil after the last.
    /// - Throws: ``TandemError/invalidJSON(_:)`` when the payload is not an array of objects
    ///   (or objects one after another), naming where; what reading throws.
    mutating func next() throws -> Element? {
        if finished { return nil }
        if !started {
            started = true
            guard var byte = try skipSpace() else { throw TandemError.invalidJSON("the payload is empty: \(reader.name) holds no JSON") }
            if byte == 0xEF, try skipByteOrderMark() { byte = try skipSpace() ?? 0 }
            if format == .array {
                guard byte == UInt8(ascii: "[") else {
                    let hint = byte == UInt8(ascii: "{") ? " (newline-delimited objects, one per line, are read as NDJSON: --ndjson)" : ""
                    throw TandemError.invalidPayload("the payload must be a JSON array of objects\(hint)")
                }
                position += 1
                if try skipSpace() == UInt8(ascii: "]") { return try finishArray() }
            }
        } else {
            let byte = try skipSpace()
            switch (format, byte) {
            case (.ndjson, nil): finished = true; return nil
            case (.array, UInt8(ascii: ",")?):
                position += 1
                _ = try skipSpace()
            case (.array, UInt8(ascii: "]")?):
                return try finishArray()
            case (.array, nil):
                throw TandemError.invalidJSON("the payload ends after element [\(count - 1)] without the ] that closes its array")
            case (.array, _?):
                throw TandemError.invalidJSON("element [\(count - 1)] is followed by \(describe(byte)) instead of , or ] (at byte \(reader.offset + Int64(position)))")
            case (.ndjson, _?):
                break
            }
        }
        let line = newlines + 1
        guard let first = try peek() else {
            throw TandemError.invalidJSON("the payload ends after the , that follows element [\(count - 1)]")
        }
        guard first == UInt8(ascii: "{") else {
            throw TandemError.invalidPayload("element [\(count)]\(format == .ndjson ? " (line \(line))" : "") is not an object")
        }
        let element = try scanObject(line: line)
        count += 1
        return element
    }

    /// After the `]`: only white space may follow.
    private mutating func finishArray() throws -> Element? {
        position += 1
        finished = true
        if let byte = try skipSpace() {
            throw TandemError.invalidJSON("the payload's array is followed by \(describe(byte)) (at byte \(reader.offset + Int64(position))); a payload is one array")
        }
        return nil
    }

    private func describe(_ byte: UInt8?) -> String {
        guard let byte else { return "the end" }
        return byte >= 0x21 && byte < 0x7f ? "'\(Character(Unicode.Scalar(byte)))'" : "the byte 0x\(String(byte, radix: 16))"
    }

    /// The byte at `position`, reading more when needed (nothing before `position` is kept), or
    /// nil at the end of the payload.
    private mutating func peek() throws -> UInt8? {
        if position == reader.end {
            position -= reader.discard(before: position)
            guard try reader.read() else { return nil }
        }
        return reader.buffer[position]
    }

    /// Skips JSON white space; the byte after it, or nil at the end.
    private mutating func skipSpace() throws -> UInt8? {
        while let byte = try peek() {
            switch byte {
            case 0x20, 0x09, 0x0D: position += 1
            case 0x0A: position += 1; newlines += 1
            default: return byte
            }
        }
        return nil
    }

    /// A UTF-8 byte order mark at the very start is skipped (RFC 8259 lets readers ignore it).
    private mutating func skipByteOrderMark() throws -> Bool {
        guard reader.offset + Int64(position) == 0 else { return false }
        while reader.end - position < 3, try reader.read() {}
        guard reader.end - position >= 3, reader.buffer[position + 1] == 0xBB, reader.buffer[position + 2] == 0xBF else { return false }
        position += 3
        return true
    }

    /// The object starting at `position`, found by counting brackets outside strings; reads
    /// more (keeping the object's bytes) until its closing brace.
    private mutating func scanObject(line: Int) throws -> Element {
        var start = position
        var index = position + 1
        var depth = 1
        var inString = false
        var escaped = false
        while true {
            if index == reader.end {
                let shift = reader.discard(before: start)
                start -= shift
                index -= shift
                guard try reader.read() else {
                    throw TandemError.invalidJSON(
                        "the payload ends inside element [\(count)]\(format == .ndjson ? " (line \(line))" : ""), which starts at byte \(reader.offset + Int64(start))")
                }
            }
            let buffer = reader.buffer
            let end = reader.end
            while index < end {
                let byte = buffer[index]
                index += 1
                if inString {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        position = index
                        return Element(start: start, end: index, index: count, line: line)
                    }
                case 0x0A: newlines += 1
                default: break
                }
            }
        }
    }
}
