import Foundation
import Tandem

/// The schema's migration steps in order, each with the name its table has once every later
/// table rename is applied: the server's tables have their latest names, so a step made before a
/// table was renamed (a column renamed, dropped or retyped in `notes` before `notes` became
/// `memos`) applies to the table under its name now.
enum PostgresMigrationSteps {
    struct Entry {
        let migration: Migration
        let step: Migration.Step
        /// The table the step names, under its name after the migrations (nil for a step of SQL or Swift).
        let table: String?
    }

    static func entries(of schema: Schema) -> [Entry] {
        let ordered = schema.migrations.flatMap { migration in migration.steps.map { (migration, $0) } }
        // A name → the name its table has at the end, for the steps before the ones seen (walking
        // back): each value is final already, so it is not looked up again (a name taken after
        // its table was renamed away names another table).
        var later: [String: String] = [:]
        func resolved(_ name: String) -> String { later[name] ?? name }
        var entries: [Entry] = []
        for (migration, step) in ordered.reversed() {
            let table: String?
            switch step {
            case .renameColumn(let name, _, _), .changeType(let name, _, _, _), .fill(let name, _, _, _), .dropColumn(let name, _, _), .dropTable(let name, _):
                table = resolved(name)
            case .renameTable(let from, let to):
                let final = resolved(to)
                table = final
                later[from] = final == from ? nil : final  // a table renamed back keeps its name
            case .copyRows(_, let into, _, _): table = resolved(into)
            case .sql, .swift: table = nil
            }
            entries.append(Entry(migration: migration, step: step, table: table))
        }
        return entries.reversed()
    }
}
