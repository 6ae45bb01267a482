#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

import AnnouncementsDomain

extension LogError {
    /// An error for a failed system call, with the system's own words for `errno`.
    static func system(_ kind: Kind, path: String, _ what: String, errno code: Int32) -> LogError {
        let reason = String(cString: strerror(code))
        let hint = code == ENOSPC || code == EDQUOT ? " (the disk is full: free some space and retry)" : ""
        return LogError(kind, path: path, message: "\(what): \(reason)\(hint)")
    }
}
