/// A sort by dates in the order of the stored values, which an index on the column serves.
/// Reading a stored value as a `Date` is monotonic but not one-to-one where seconds since 1970
/// are finer than a `Date` (before 1985): two stored values can read as one `Date`, which
/// Swift's stable sort leaves in id order while the stored order parts them. Values Tandem
/// writes never do (each `Date` is stored as itself plus the offset, exactly); another program
/// may write them. So the stored order is used only when no two neighbouring rows hold
/// different values of a date column that read as the same `Date` (one row past the limit
/// included); otherwise the query is run again ordered by the dates as read.
struct DateOrderCheck {
    /// The date columns of the sort.
    let columns: [String]
    /// The query ordered by the dates as read, with its limit and offset.
    let exact: SQLFragment
    let limit: Int?
    let offset: Int

    /// True when `rows`, in stored order, are in the order of their dates as read.
    func holds(for rows: [Row]) -> Bool {
        guard rows.count > 1 else { return true }
        for column in columns {
            guard let index = rows[0].columns.firstIndex(of: column) else { return false }
            for i in 1..<rows.count {
                let (a, b) = (rows[i - 1].values[index], rows[i].values[index])
                if a != b, let x = a.doubleValue, let y = b.doubleValue, DateSemantics.read(x) == DateSemantics.read(y) { return false }
            }
        }
        return true
    }
}

extension Transaction {
    /// The rows of a query's SELECT, in its order (see ``DateOrderCheck``).
    func rows(_ plan: RecordSQL) throws -> [Row] {
        let rows = try fetchAll(plan.select.text, plan.select.arguments)
        guard let check = plan.dateOrder else { return rows }
        guard check.holds(for: rows) else { return try fetchAll(check.exact.text, check.exact.arguments) }
        return Array(rows.dropFirst(check.offset).prefix(check.limit ?? .max))
    }
}
