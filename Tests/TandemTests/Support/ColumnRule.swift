import Foundation
@testable import Tandem

/// What a declared column stores for a value, written from the rule's description (DESIGN.md,
/// "The data promise") independently of the SQL that implements it: nil when it refuses it.
enum ColumnRule {
    static func stored(_ value: DatabaseValue, in type: ColumnSchema.ColumnType) -> DatabaseValue? {
        switch (value, type) {
        case (.null, _): return .null
        case (.real(let d), _) where d.isNaN: return nil  // SQLite would store NULL: refused
        case (.blob, _): return nil
        case (.real(let d), _) where !d.isFinite: return nil
        case (.integer, .integer), (.real, .real), (.text, .text): return value
        case (.real(let d), .integer): return Int64(exactly: d).map { .integer($0) }
        case (.integer(let i), .real): return Double(exactly: i).map { .real($0) }
        case (.integer(let i), .text): return .text(String(i))
        case (.real(let d), .text): return realText(d).map { .text($0) }
        case (.text(let s), .integer):
            guard let number = number(s) else { return nil }
            switch number {
            case .integer(let i): return .integer(i)
            case .real(let d): return Int64(exactly: d).map { .integer($0) }
            }
        case (.text(let s), .real):
            guard let number = number(s), let d = Double(s.trimmingCharacters(in: sqliteSpaces)) else { return nil }
            if case .integer(let i) = number, Double(exactly: i) == nil { return nil }
            return d.isFinite ? .real(d) : nil
        }
    }

    enum Number { case integer(Int64), real(Double) }

    /// The white space SQLite skips around a number: tab, line feed, vertical tab, form feed,
    /// carriage return and space.
    static let sqliteSpaces = CharacterSet(charactersIn: "\t\n\u{0B}\u{0C}\r ")

    /// The number a text is when SQLite's numeric affinity converts it: a well-formed literal
    /// (white space around it, a sign, digits with at most one point, an exponent), an integer
    /// when it has neither point nor exponent and fits 64 bits; nil when it is not one.
    static func number(_ text: String) -> Number? {
        let trimmed = text.trimmingCharacters(in: sqliteSpaces)
        var rest = Substring(trimmed)
        if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
        let mantissa = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        rest = rest.dropFirst(mantissa.count)
        guard mantissa.filter({ $0 == "." }).count <= 1, mantissa.contains(where: \.isNumber) else { return nil }
        var exponent = false
        if rest.first == "e" || rest.first == "E" {
            rest = rest.dropFirst()
            if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty else { return nil }
            rest = rest.dropFirst(digits.count)
            exponent = true
        }
        guard rest.isEmpty else { return nil }
        if !exponent, !mantissa.contains("."), let integer = Int64(trimmed.hasPrefix("+") ? String(trimmed.dropFirst()) : trimmed) {
            return .integer(integer)
        }
        return Double(trimmed).map { .real($0) }
    }

    /// A real as the text a text column stores: 15 significant digits with a decimal point
    /// (`2.0`, `1.0e+300`), when those read back as the same real; `-0.0` keeps its sign.
    static func realText(_ d: Double) -> String? {
        if d == 0 { return d.sign == .minus ? "-0.0" : "0.0" }
        var text = String(format: "%.15g", d)
        guard Double(text) == d else { return nil }
        if !text.contains(".") {
            let exponent = text.firstIndex(of: "e") ?? text.endIndex
            text.insert(contentsOf: ".0", at: exponent)
        }
        return text
    }

    /// Generated values of every kind: the adversarial ones, numbers at and around the limits
    /// where conversions stop being exact, number-like and JSON-like text, and random values.
    static func generatedValues(seed: UInt64 = 0x5eed, count: Int = 120) -> [DatabaseValue] {
        let limit: Int64 = 1 << 53
        let integers: [DatabaseValue] = [.integer(limit), .integer(limit + 1), .integer(-limit - 1), .integer(.max - 1), .integer(1 << 62)]
        let texts: [String] = [
            "12", "-7", " 12 ", "\t12\n", "007", "+5", "1e3", "2.0", "2.5", ".5", "5.", "-0", "-0.0", "12abc", "abc", " ",
            "0x10", "1e", "e5", ".", "1.2.3", "inf", "NaN", "1e400", "9223372036854775807", "9223372036854775808",
            "-9223372036854775808", "-9223372036854775809", "9007199254740993", "10000000000000000000",
            "1" + String(repeating: "0", count: 30),
        ]
        var values: [DatabaseValue] = adversarialValues.map(\.databaseValue) + integers + texts.map { .text($0) }
        values += [
            .real(9223372036854775808.0), .real(-9223372036854775808.0), .real(9223372036854774784.0), .real(2.5), .real(-2.5),
            .real(1e16), .real(4503599627370497.0), .real(0.5), .real(1e300), .real(-1e-300), .real(.infinity), .real(-.infinity),
            .blob(Data([0, 1, 2])), .blob(Data()),
        ]
        var random = SeededRandom(seed: seed)
        for _ in 0..<count {
            let integer = Int64(bitPattern: random.next())
            values.append(.integer(integer))
            values.append(.integer(integer >> (random.next() % 63)))
            let bits = Double(bitPattern: random.next())
            if bits.isFinite { values.append(.real(bits)) }
            values.append(.real(Double(Int64(bitPattern: random.next()) >> (random.next() % 63))))
            values.append(.real(Double(String(format: "%.*g", Int(random.next() % 15) + 1, Double(bitPattern: random.next() % (1 << 62))))!))
            values.append(.text(numberText(&random)))
            values.append(
                .text(
                    String(
                        (0..<Int(random.next() % 12)).map { _ in
                            Character(Unicode.Scalar(UInt32(random.next() % 0x2FF) + 1).map { $0.properties.isNoncharacterCodePoint ? "x" : $0 } ?? "x")
                        })))
        }
        return values
    }

    /// Number-like text: white space, a sign, leading zeros, digits, a point, an exponent, and
    /// sometimes trailing junk, within 15 significant digits (which every parser reads alike).
    private static func numberText(_ random: inout SeededRandom) -> String {
        func pick<T>(_ options: [T]) -> T { options[Int(random.next() % UInt64(options.count))] }
        func digits(_ count: Int) -> String { String((0..<count).map { _ in Character(String(random.next() % 10)) }) }
        var text = pick(["", "", "", " ", "\t", "\n "]) + pick(["", "", "-", "+"]) + pick(["", "", "0", "00"])
        let integerDigits = Int(random.next() % 16)
        text += digits(integerDigits)
        if random.next() % 3 == 0 { text += "." + digits(Int(random.next() % UInt64(16 - integerDigits))) }
        if random.next() % 4 == 0 { text += pick(["e", "E"]) + pick(["", "-", "+"]) + digits(Int(random.next() % 3)) }
        text += pick(["", "", "", "", " ", "x", "\u{0}"])
        return text
    }
}
