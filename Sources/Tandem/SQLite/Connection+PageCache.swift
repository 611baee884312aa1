extension Connection {
    /// Runs `body` with the page caches of the main and the temporary database at `kib` KiB
    /// each (SQLite's default is 2 MiB), then sets them back.
    ///
    /// A transaction that writes more pages than the cache holds spills dirty pages to the WAL
    /// before its commit, and reads them back when it touches them again; a larger cache keeps
    /// them until the commit writes each once (https://sqlite.org/pragma.html#pragma_cache_size).
    func withPageCache<T>(kib: Int, _ body: () throws -> T) throws -> T {
        let main = try scalar("PRAGMA main.cache_size").int64Value ?? -2000
        let temp = try scalar("PRAGMA temp.cache_size").int64Value ?? -2000
        try executeScript("PRAGMA main.cache_size = -\(kib); PRAGMA temp.cache_size = -\(kib)")
        defer { try? executeScript("PRAGMA main.cache_size = \(main); PRAGMA temp.cache_size = \(temp)") }
        return try body()
    }
}
