import Foundation

extension LastVerification {
    init(_ report: VerifyReport) {
        self.init(
            at: report.startedAt, agrees: report.agrees, differingRows: report.differences.count,
            repairedRows: report.tables.reduce(0) { $0 + $1.repairedRows }, differingTables: report.tables.filter { !$0.agrees }.map(\.name))
    }
}
