import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client follows no redirect: `URLSession` would send the request on to whatever the
/// `Location` names, its `Authorization` (the token) included, whatever the host, and would turn
/// a write answered 301 or 302 into a `GET` without its body, or send a 307's without it. A
/// redirect is the caller's answer instead: a `ClientError.status` with the redirect's code, whose
/// message names the address it points to (see `ClientError(redirect:location:)`).
final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    /// Whether the session was invalidated (the client let go of it: see its `deinit`).
    let sessionInvalidated = Atomic<Bool>(false)

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        sessionInvalidated.store(true, ordering: .relaxed)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
