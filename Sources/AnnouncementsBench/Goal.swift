/// One goal of `make bench` (issue 14, "Speed at the limit") with what one run measured for it:
/// a figure against an anchor measured in the same run, a figure against a fixed limit, or a
/// comparison the run could not make, with the reason.
enum Goal: Equatable {
    /// Met when `measured / anchor` is at least `target`.
    case ratio(name: String, measured: Double, anchor: Double, unit: String, target: Double)
    /// Met when `measured` is at most `limit`, both in `unit`.
    case most(name: String, measured: Double, unit: String, limit: Double)
    /// Not measured in this run (no PostgreSQL, no orjson …), and why.
    case skipped(name: String, reason: String)

    /// What the goal is, as the table shows it.
    var name: String {
        switch self {
        case .ratio(let name, _, _, _, _), .most(let name, _, _, _), .skipped(let name, _): name
        }
    }

    /// `measured / anchor`, for a goal that has an anchor.
    var ratio: Double? {
        guard case .ratio(_, let measured, let anchor, _, _) = self else { return nil }
        return measured / anchor
    }

    /// Whether this run met the goal; nil when it was skipped. A ratio to an anchor of 0 (a
    /// baseline that did nothing) is not a met goal.
    var isMet: Bool? {
        switch self {
        case .ratio(_, _, let anchor, _, let target):
            guard anchor > 0, let ratio else { return false }
            return ratio >= target
        case .most(_, let measured, _, let limit):
            return measured <= limit
        case .skipped:
            return nil
        }
    }
}
