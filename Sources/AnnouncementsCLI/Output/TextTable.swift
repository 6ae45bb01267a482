/// Columns of text, left-aligned and padded to the widest cell, in a terminal's columns (a CJK
/// character takes two: `String.columns`).
struct TextTable {
    private let header: [String]
    private var rows: [[String]] = []

    init(_ header: String...) {
        self.header = header
    }

    init(_ header: [String]) {
        self.header = header
    }

    mutating func add(_ cells: String...) {
        rows.append(cells)
    }

    mutating func add(_ cells: [String]) {
        rows.append(cells)
    }

    var isEmpty: Bool { rows.isEmpty }

    /// The table, one line per row, the last column unpadded.
    var rendered: String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].columns }.max() ?? 0 }
        return all.map { Self.line($0, widths: widths) }.joined(separator: "\n")
    }

    /// `row`'s cells padded to `widths` and two spaces apart, the last unpadded.
    fileprivate static func line(_ row: [String], widths: [Int]) -> String {
        row.enumerated().map { column, cell in
            column == row.count - 1 ? cell : cell.padding(to: widths[column])
        }.joined(separator: "  ")
    }
}

/// A table printed a row at a time, whose rows are not known in advance (a follow that never
/// ends): each cell padded to the widest of its column so far, starting from `widths` (what most
/// cells take), so that the rows stay aligned with the header until a wider cell comes.
struct RunningTable {
    private var widths: [Int]

    init(widths: [Int]) {
        self.widths = widths
    }

    /// `row` as a line of the table.
    mutating func line(_ row: [String]) -> String {
        for (column, cell) in row.enumerated() where column < widths.count {
            widths[column] = max(widths[column], cell.columns)
        }
        return TextTable.line(row, widths: widths)
    }
}

extension String {
    /// Spaces after it up to `width` columns.
    func padding(to width: Int) -> String {
        let columns = columns
        return columns >= width ? self : self + String(repeating: " ", count: width - columns)
    }

    /// At most `limit` columns, with an ellipsis (one column) when cut.
    func truncated(to limit: Int) -> String {
        guard columns > limit else { return self }
        var kept = ""
        var used = 0
        for character in self {
            let columns = character.columns
            guard used + columns <= limit - 1 else { break }
            kept.append(character)
            used += columns
        }
        return kept + "…"
    }
}
