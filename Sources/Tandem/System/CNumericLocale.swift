import Foundation

/// Runs code with the C locale's number format on this thread (`uselocale(3)`), whatever the
/// process's `LC_NUMERIC` (an app that called `setlocale(LC_ALL, "")` under `de_DE` has a
/// decimal comma).
///
/// SQLite's JSON functions in Debian's build read reals with the C library's `strtod`, which
/// follows the thread's locale: under a decimal comma, `'{"r":0.5}' ->> '$.r'` reads 0. Every
/// statement Tandem steps, and every real it formats, runs in the C locale, so views read and
/// triggers write the same numbers in any locale.
///
/// Related documentation: https://man7.org/linux/man-pages/man3/uselocale.3.html
enum CNumericLocale {
    nonisolated(unsafe) private static let locale: locale_t? = newlocale(LC_NUMERIC_MASK, "C", nil)

    @inline(__always)
    static func run<T>(_ body: () throws -> T) rethrows -> T {
        guard let locale else { return try body() }
        let previous = uselocale(locale)
        defer { uselocale(previous) }
        return try body()
    }
}

extension CNumericLocale {
    /// `strtod(3)` of a NUL-terminated number in the C locale: the correctly rounded nearest
    /// double, as `Double(String)` reads it.
    static func strtod(_ text: UnsafePointer<CChar>) -> Double {
        run { Glibc.strtod(text, nil) }
    }
}
