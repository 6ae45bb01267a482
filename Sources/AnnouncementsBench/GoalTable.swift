import Foundation

/// The last words of `make bench`: every goal with its figure, its anchor, the ratio, the target
/// and whether this run met it, then a count. A benchmark asserts nothing: a goal not met is
/// printed, not an exit status.
struct GoalTable {
    var goals: [Goal]

    /// The table, one goal per line, and a summary line.
    func render() -> String {
        var rows = [["goal", "measured", "anchor", "ratio", "target", ""]]
        for goal in goals {
            switch goal {
            case .ratio(let name, let measured, let anchor, let unit, let target):
                rows.append([name, Self.figure(measured, unit), Self.figure(anchor, unit), goal.ratio.map { String(format: "%.2f", $0) } ?? "-",
                             "≥ " + Self.figure(target, ""), Self.verdict(goal.isMet)])
            case .most(let name, let measured, let unit, let limit):
                rows.append([name, Self.figure(measured, unit), "-", "-", "≤ " + Self.figure(limit, unit), Self.verdict(goal.isMet)])
            case .skipped(let name, let reason):
                rows.append([name, "skipped: \(reason)"])
            }
        }
        let widths = (0..<5).map { column in rows.filter { $0.count > 2 }.map { $0[column].count }.max() ?? 0 }
        let lines = rows.map { row in
            guard row.count > 2 else { return Self.padded(row[0], widths[0]) + "  " + row[1] }
            var line = ([Self.padded(row[0], widths[0])] + (1..<5).map { Self.padded(row[$0], widths[$0], right: true) } + [row[5]])
                .joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
        let judged = goals.compactMap(\.isMet)
        let skipped = goals.count - judged.count
        let summary = "\(judged.filter { $0 }.count) of \(judged.count) goals met" + (skipped > 0 ? ", \(skipped) skipped" : "")
        return (lines + [summary]).joined(separator: "\n")
    }

    /// "met" or "NOT met" (capitals, to stand out in a column of "met"); nothing when skipped.
    private static func verdict(_ met: Bool?) -> String {
        met.map { $0 ? "met" : "NOT met" } ?? ""
    }

    /// A figure with its unit: rates as whole numbers with thousands separators, small figures
    /// (seconds, ratios) with two decimals.
    static func figure(_ value: Double, _ unit: String) -> String {
        let number: String
        if value >= 100 {
            let digits = Array(String(format: "%.0f", value))
            number = digits.enumerated().map { index, digit in
                index > 0 && (digits.count - index) % 3 == 0 ? ",\(digit)" : "\(digit)"
            }.joined()
        } else {
            number = String(format: "%.2f", value)
        }
        return unit.isEmpty ? number : "\(number) \(unit)"
    }

    /// `text` padded with spaces to `width` characters (on the left for figures).
    private static func padded(_ text: String, _ width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return right ? padding + text : text + padding
    }
}
