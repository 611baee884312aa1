import Foundation
import Testing
@testable import TandemCLI
@testable import TandemPostgres

/// PostgreSQL connection strings read as libpq reads them (`PQconninfoParse`), their passwords
/// hidden in every spelling.
@Suite struct ConnectionStringTests {
    /// Generated passwords of awkward characters, in every spelling libpq accepts: libpq reads
    /// back the password as meant from the normalized string, and no spelling shows it (raw,
    /// quoted or percent-encoded) once redacted.
    @Test(arguments: 0..<3)
    func everySpellingOfAPasswordIsFoundAndHidden(seed: UInt64) {
        var random = StressRandom(seed: seed)
        let alphabet = Array("aZ09 @:/?#'\\=&!$;,é€ \t")
        for _ in 0..<40 {
            let password = String((0..<Int.random(in: 3...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let quoted = "'" + password.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
            // Raw, as a user may type it: a raw `@…?…=` in a password reads as a query.
            let raw = password.replacingOccurrences(of: "=", with: "")
            let spellings = [
                "postgresql://app:\(raw)@db.example.com:5432/app?application_name=me@example.com",
                "POSTGRES://app:\(encoded)@db.example.com/app",
                "postgresql://db.example.com/app?user=app&password=\(encoded)",
                "host=db.example.com user=app password=\(quoted) dbname=app",
                "host=db.example.com password = \(quoted)",
            ]
            for spelling in spellings {
                let normalized = ConnectionString.normalized(spelling)
                let meant = spelling.hasPrefix("postgresql://app:") ? raw : password
                #expect(ConnectionString.password(of: normalized) == meant, "\(spelling) read as \(normalized)")
                for text in [spelling, normalized] {
                    let shown = ConnectionString.redacted(text)
                    for form in [meant, encoded, quoted] where form.count > 2 {
                        #expect(!shown.contains(form), "\(text) shown as \(shown)")
                    }
                }
            }
        }
    }
}
