/// A small command-line parser: positionals, `--flag`s and `--option value` (or `--option=value`).
///
/// Anything after `--` is positional, and so is a word with white space in it (SQL that starts
/// with a `--` comment). A word starting with `--` that the command does not know
/// is an error naming it; single words like `-5` are positional (SQL arguments may be negative).
struct Arguments: Equatable {
    var positionals: [String] = []
    var flags: Set<String> = []
    var options: [String: String] = [:]
    /// Options that may be given more than once (`--map a=b --map c=d`), in order.
    var repeated: [String: [String]] = [:]

    /// The flags and options a command takes, declared once with the command
    /// (``CommandLineTool/Command/syntax``): its parser reads them, and a test holds its usage
    /// text to them (each one described, none described that is not taken).
    struct Syntax: Sendable, Equatable {
        /// Flag names without dashes (`json`).
        var flags: Set<String> = []
        /// Option names without dashes that take a value (`schema`).
        var options: Set<String> = []
        /// Options that may be given more than once (`map`).
        var repeatable: Set<String> = []

        /// Every name, flags and options alike.
        var names: Set<String> { flags.union(options).union(repeatable) }
    }

    /// `words` parsed by `syntax`.
    init(_ words: [String], _ syntax: Syntax) throws {
        try self.init(words, flags: syntax.flags, options: syntax.options, repeatable: syntax.repeatable)
    }

    struct UsageError: Error, Equatable, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// - Parameters:
    ///   - words: the words after the command name.
    ///   - flags: flag names without dashes (`json`).
    ///   - options: option names without dashes that take a value (`schema`).
    init(_ words: [String], flags knownFlags: Set<String> = [], options knownOptions: Set<String> = [], repeatable: Set<String> = []) throws {
        var index = 0
        var onlyPositionals = false
        while index < words.count {
            let word = words[index]
            index += 1
            // A word with white space is never an option: `-- comment\nSELECT 1` is SQL.
            if onlyPositionals || !word.hasPrefix("--") || word.contains(where: \.isWhitespace) {
                positionals.append(word)
                continue
            }
            if word == "--" { onlyPositionals = true; continue }
            var name = String(word.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if knownFlags.contains(name) {
                guard inlineValue == nil else { throw UsageError(message: "--\(name) takes no value") }
                flags.insert(name)
            } else if repeatable.contains(name) {
                if let inlineValue {
                    repeated[name, default: []].append(inlineValue)
                } else {
                    guard index < words.count else { throw UsageError(message: "--\(name) needs a value") }
                    repeated[name, default: []].append(words[index])
                    index += 1
                }
            } else if knownOptions.contains(name) {
                if let inlineValue {
                    options[name] = inlineValue
                } else {
                    guard index < words.count else { throw UsageError(message: "--\(name) needs a value") }
                    options[name] = words[index]
                    index += 1
                }
            } else {
                throw UsageError(message: "unknown option '--\(name)'")
            }
        }
    }

    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// The option's value parsed as an integer in `range`, or `defaultValue` when absent.
    func integer(_ name: String, default defaultValue: Int, range: ClosedRange<Int> = 0...Int.max) throws -> Int {
        guard let text = options[name] else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(message: "--\(name) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }

    /// The option's value as seconds (a decimal number ≥ 0), or `defaultValue`.
    func seconds(_ name: String, default defaultValue: Double) throws -> Double {
        guard let text = options[name] else { return defaultValue }
        guard let value = Double(text), value >= 0, value.isFinite else {
            throw UsageError(message: "--\(name) takes a number of seconds, not '\(text)'")
        }
        return value
    }

    /// The positionals `names` are required, and no others unless `more` (e.g. SQL arguments).
    func require(_ names: [String], more: Bool = false) throws {
        if positionals.count < names.count {
            throw UsageError(message: "missing \(names[positionals.count...].joined(separator: " "))")
        }
        if !more, positionals.count > names.count {
            throw UsageError(message: "unexpected argument '\(positionals[names.count])'")
        }
    }
}
