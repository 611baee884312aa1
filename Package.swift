// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Tandem",
    products: [
        .library(name: "Tandem", targets: ["Tandem"]),
        .library(name: "TandemPostgres", targets: ["TandemPostgres"]),
        .executable(name: "tandem", targets: ["tandem"]),
        .executable(name: "tandem-example", targets: ["tandem-example"]),
        .executable(name: "tandem-api-example", targets: ["tandem-api-example"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            path: "Sources/CCrypto"
        ),
        .target(
            name: "Tandem",
            dependencies: ["CSQLite", "CCrypto"],
            path: "Sources/Tandem"
        ),
        .systemLibrary(
            name: "CLibPQ",
            path: "Sources/CLibPQ",
            providers: [.apt(["libpq-dev"])]
        ),
        .target(
            name: "TandemPostgres",
            dependencies: ["Tandem", "CLibPQ"],
            path: "Sources/TandemPostgres"
        ),
        .target(
            name: "TandemCLI",
            dependencies: ["Tandem", "TandemPostgres"],
            path: "Sources/TandemCLI"
        ),
        .executableTarget(
            name: "tandem",
            dependencies: ["TandemCLI"],
            path: "Tools/tandem"
        ),
        .executableTarget(
            name: "tandem-test-support",
            dependencies: ["TandemCLI"],
            path: "Tools/test-support"
        ),
        .executableTarget(
            name: "tandem-example",
            dependencies: ["Tandem"],
            path: "Tools/example",
            exclude: ["api"]
        ),
        .executableTarget(
            name: "tandem-api-example",
            dependencies: ["Tandem"],
            path: "Tools/example/api",
            exclude: ["api_server.py", "connector.sh"]
        ),
        .testTarget(
            name: "TandemTests",
            dependencies: ["Tandem", "TandemCLI", "TandemPostgres"],
            path: "Tests/TandemTests"
        ),
    ]
)
