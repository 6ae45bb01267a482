// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "announcements",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "announcements", targets: ["AnnouncementsCLI"]),
        .library(name: "AnnouncementsDomain", targets: ["AnnouncementsDomain"]),
        .library(name: "AnnouncementsStore", targets: ["AnnouncementsStore"]),
        .library(name: "AnnouncementsPostgres", targets: ["AnnouncementsPostgres"]),
        .library(name: "AnnouncementsHTTP", targets: ["AnnouncementsHTTP"]),
        .library(name: "AnnouncementsClient", targets: ["AnnouncementsClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // One trait, not its two defaults: SwiftPM put the two in a random order on each new build
        // plan, and a changed order recompiled Hummingbird and HummingbirdCore (a no-op `make serve`
        // after `make test` took 50 s). ConfigurationSupport (swift-configuration) is not used here.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // Writes through a node that does not hold the writer role go to the one that does.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
    ],
    targets: [
        // libyaml from the system (Debian: libyaml-dev, Homebrew: libyaml).
        .systemLibrary(
            name: "CYaml",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]
        ),
        // zlib from the system (Debian: zlib1g-dev, Homebrew: zlib), for compressed responses.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // The domain: events and their line format, the hash chain, validation, the decisions a
        // write makes, and the read models events fold into. Values only: no files, no threads,
        // no clock, no HTTP.
        .target(
            name: "AnnouncementsDomain",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        // The store over a log: the group-commit writer, replay, snapshots, the feed, and the
        // logs themselves behind `EventLog` (the file log). No HTTP, no CLI.
        .target(
            name: "AnnouncementsStore",
            dependencies: [
                "AnnouncementsDomain",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // The log in PostgreSQL (`storage: postgres`): another `EventLog`, through postgres-nio.
        .target(
            name: "AnnouncementsPostgres",
            dependencies: [
                "AnnouncementsDomain",
                "AnnouncementsStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // config.yaml, read through libyaml.
        .target(
            name: "AnnouncementsConfig",
            dependencies: [
                "CYaml", "AnnouncementsDomain", "AnnouncementsStore", "AnnouncementsPostgres",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The web client's pages: Mustache templates, scripts and stylesheets compiled in, and the
        // values each page shows (the board, an announcement, its history). No HTTP, no store.
        .target(
            name: "AnnouncementsWeb",
            dependencies: [
                "AnnouncementsDomain",
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            resources: [.embedInCode("Templates"), .embedInCode("Assets")]
        ),
        // The HTTP API over the store: routes, versions, representations, and the web client's
        // routes. No argument parsing.
        .target(
            name: "AnnouncementsHTTP",
            dependencies: [
                "AnnouncementsDomain", "AnnouncementsStore", "AnnouncementsWeb",
                "CZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // The client library for apps (iOS, macOS, Linux): Foundation only, nothing of the server.
        .target(name: "AnnouncementsClient"),
        // The `announcements` command line.
        .executableTarget(
            name: "AnnouncementsCLI",
            dependencies: [
                "AnnouncementsClient",
                "AnnouncementsDomain", "AnnouncementsStore",
                "AnnouncementsConfig",
                "AnnouncementsHTTP",
                "AnnouncementsPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // `make bench`: replay and durable-append throughput, the anchors of the HTTP figures (a
        // bare Hummingbird server, the disk's own sync) and the goals' table (a benchmark, never a test).
        .executableTarget(
            name: "AnnouncementsBench",
            dependencies: [
                "AnnouncementsDomain", "AnnouncementsStore", "AnnouncementsPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `make bench`'s peer (a) of issue 37: what a team would build instead with Hummingbird and
        // postgres-nio (scripts/peers/: its Python peer (b) beside it). Not part of the product.
        .executableTarget(
            name: "PeerHummingbirdPostgres",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "scripts/peers/hummingbird-postgres"
        ),
        .testTarget(
            name: "AnnouncementsStoreTests",
            dependencies: [
                "AnnouncementsDomain", "AnnouncementsStore",
                .product(name: "Logging", package: "swift-log"), .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .testTarget(name: "AnnouncementsWebTests", dependencies: ["AnnouncementsWeb", "AnnouncementsDomain"]),
        .testTarget(name: "AnnouncementsConfigTests", dependencies: ["AnnouncementsConfig", "AnnouncementsPostgres"]),
        .testTarget(
            name: "AnnouncementsPostgresTests",
            dependencies: [
                "AnnouncementsDomain", "AnnouncementsStore", "AnnouncementsPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "AnnouncementsHTTPTests",
            dependencies: [
                "AnnouncementsHTTP",
                "AnnouncementsConfig",
                "AnnouncementsPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "AnnouncementsClientTests",
            dependencies: [
                "AnnouncementsClient",
                "AnnouncementsHTTP",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "AnnouncementsBenchTests",
            dependencies: ["AnnouncementsBench", "AnnouncementsHTTP", .product(name: "HummingbirdTesting", package: "hummingbird")]
        ),
        .testTarget(
            name: "AnnouncementsCLITests",
            dependencies: [
                "AnnouncementsCLI", "AnnouncementsClient", "AnnouncementsDomain", "AnnouncementsStore", "AnnouncementsPostgres",
                .product(name: "Logging", package: "swift-log"), .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
