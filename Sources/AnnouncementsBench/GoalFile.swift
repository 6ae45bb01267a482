import Foundation

/// The goals the scripts of `make bench` measured, one per line, tab-separated, so that the run
/// can end on one table however many scripts and processes took the figures:
///
///     ratio <TAB> name <TAB> measured <TAB> anchor <TAB> unit <TAB> target
///     most  <TAB> name <TAB> measured <TAB> unit <TAB> limit
///     skip  <TAB> name <TAB> reason
///
/// Empty lines and lines starting with `#` are comments.
enum GoalFile {
    /// The goals in the file at `path`, in order.
    static func read(path: String) throws -> [Goal] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw BenchError(path: path, "cannot read the goals: \(error.localizedDescription)")
        }
        return try parse(text, path: path)
    }

    /// The goals in `text`; `path` names the file in errors.
    static func parse(_ text: String, path: String) throws -> [Goal] {
        var goals: [Goal] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.isEmpty || line.hasPrefix("#") { continue }
            goals.append(try goal(line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init), path: path, line: index + 1))
        }
        return goals
    }

    /// One line's goal; an error names the line and the field that is wrong.
    private static func goal(_ fields: [String], path: String, line: Int) throws -> Goal {
        func expect(_ count: Int, _ form: String) throws {
            guard fields.count == count else {
                throw BenchError(path: path, line: line, "a '\(fields[0])' goal has \(count) tab-separated fields (\(form)), this line has \(fields.count)")
            }
        }
        func number(_ field: Int, _ what: String) throws -> Double {
            guard let value = Double(fields[field]), value.isFinite, value >= 0 else {
                throw BenchError(path: path, line: line, "field \(field + 1) (\(what)) is not a number of 0 or more: '\(fields[field])'")
            }
            return value
        }
        switch fields[0] {
        case "ratio":
            try expect(6, "ratio, name, measured, anchor, unit, target")
            return .ratio(name: fields[1], measured: try number(2, "measured"), anchor: try number(3, "anchor"), unit: fields[4], target: try number(5, "target"))
        case "most":
            try expect(5, "most, name, measured, unit, limit")
            return .most(name: fields[1], measured: try number(2, "measured"), unit: fields[3], limit: try number(4, "limit"))
        case "skip":
            try expect(3, "skip, name, reason")
            return .skipped(name: fields[1], reason: fields[2])
        default:
            throw BenchError(path: path, line: line, "unknown kind of goal '\(fields[0])': expected ratio, most or skip")
        }
    }
}
