import Foundation
import Tandem

/// Parses `?` arguments from the command line. A word binds as an integer or a real only when
/// it reads back as exactly the same text (`42`, `-7`, `2.5`), so `007`, `+5`, `-0`, `1e3` and
/// `2.50` stay text; `--args-json` gives exact types instead.
func bindValue(_ text: String) -> DatabaseValue {
    if let i = Int64(text), String(i) == text, text != "-0" { return .integer(i) }
    if let d = Double(text), d.isFinite, d.description == text, text.contains("."), !text.contains("e") { return .real(d) }
    return .text(text)
}

/// The `?` arguments of `exec`, `query` and `watch`: the ARG words, or the JSON array given with
/// `--args-json` (`'["007", 2.0, 3, null]'`: strings bind as text, integers as integers, numbers
/// with a fraction or exponent as reals, null as NULL, true/false as 1/0).
func sqlArguments(_ args: Arguments, from count: Int) throws -> [DatabaseValue] {
    let words = Array(args.positionals.dropFirst(count))
    guard let json = args.options["args-json"] else { return words.map(bindValue) }
    guard words.isEmpty else {
        throw Arguments.UsageError(message: "give the SQL arguments either as ARGs or with --args-json, not both")
    }
    let parsed: JSONValue
    do {
        parsed = try JSONValue(parsingExactly: json)
    } catch let inexact as JSONInexactNumber {
        throw Arguments.UsageError(message: "--args-json: element \(inexact.keyPath): \(inexact.reason)")
    }
    guard case .array(let values) = parsed else {
        throw Arguments.UsageError(message: "--args-json takes a JSON array, such as '[\"007\", 2.0, null]'")
    }
    return try values.enumerated().map { index, value in
        switch value {
        case .object, .array:
            throw Arguments.UsageError(message: "--args-json: element \(index) is an \(value.isObject ? "object" : "array"); give a string, number, true, false or null")
        default: return value.databaseValue
        }
    }
}

private extension JSONValue {
    var isObject: Bool { if case .object = self { return true } else { return false } }
}
