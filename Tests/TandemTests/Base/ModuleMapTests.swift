import Foundation
import Testing

/// DESIGN.md's module map is the truth about the tree: its module table names every target of
/// Package.swift, and its folder table and layer map (the ```layers block `Tools/check-layers`
/// type-checks) name exactly the folders of `Sources/Tandem`.
@Suite struct ModuleMapTests {
    static let root = packageRoot

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The first cell of each row of the Markdown table under `heading`'s first table, without backticks.
    static func firstCells(of design: String, tableStartingWith header: String) -> [String] {
        guard let start = design.range(of: header) else { return [] }
        var cells: [String] = []
        for line in design[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).dropFirst(2) {
            guard line.hasPrefix("|") else { break }
            let cell = line.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            cells.append(cell.trimmingCharacters(in: .whitespaces))
        }
        return cells
    }

    @Test func theLayerMapAndTheFolderTableNameTheTree() throws {
        let design = try Self.text("DESIGN.md")
        let sources = Self.root.appendingPathComponent("Sources/Tandem")
        let tree = Set(
            try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { name in
                // The documentation catalog is no layer.
                guard !name.hasSuffix(".docc") else { return false }
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: sources.appendingPathComponent(name).path, isDirectory: &isDirectory) && isDirectory.boolValue
            })
        let table = Set(
            Self.firstCells(of: design, tableStartingWith: "| folder | what lives there |").map { cell in
                String(cell.trimmingCharacters(in: CharacterSet(charactersIn: "`")).dropLast(cell.hasSuffix("/`") ? 1 : 0))
            })
        let block = try #require(design.firstMatch(of: /```layers\n((?:.*\n)*?)```/)?.output.1, "DESIGN.md has a ```layers block")
        let layers = Set(
            block.split(separator: "\n").compactMap { $0.split(separator: ":").first.map { String($0).trimmingCharacters(in: .whitespaces) } }
                .map { $0.hasSuffix("(public)") ? String($0.dropLast("(public)".count)).trimmingCharacters(in: .whitespaces) : $0 }
                .filter { !$0.isEmpty })
        #expect(table == tree, "DESIGN.md's folder table: \(table.symmetricDifference(tree).sorted()) disagree with Sources/Tandem")
        #expect(layers == tree, "DESIGN.md's layer map: \(layers.symmetricDifference(tree).sorted()) disagree with Sources/Tandem")
    }

    @Test func theModuleTableNamesEveryTarget() throws {
        let design = try Self.text("DESIGN.md")
        let package = try Self.text("Package.swift")
        let targets = Set(package.matches(of: /\.(?:target|systemLibrary|executableTarget|testTarget)\(\s*name: "([^"]+)"/).map { String($0.output.1) })
        #expect(targets.count >= 8, "Package.swift's targets: \(targets.sorted())")
        let modules = Set(
            Self.firstCells(of: design, tableStartingWith: "| module | what lives there | depends on |").map { cell in
                String(cell.split(separator: " ").first ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            })
        #expect(modules == targets, "DESIGN.md's module table: \(modules.symmetricDifference(targets).sorted()) disagree with Package.swift")
    }
}
