import AnnouncementsDomain
import HTTPTypes
import Hummingbird
import Logging

/// The one place where errors become responses: every error leaves as an `APIError`'s JSON, or,
/// on the web client's paths (and to a browser's navigation to a path nobody serves), as a page
/// saying it in words (`WebRoutes.problem`).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The routes, for the `Allow` of a 405.
    let routes: RouteTable
    /// The web client, whose paths answer errors as pages.
    let web: WebRoutes?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return try answer(error, request, context)
        } catch let error as StoreError {
            if case .log(let problem) = error, Self.isReadBack(problem) {
                // The answer leaves out where the log is; the operator's log says it. (A failed
                // write is logged once for its whole batch, by the store.)
                context.logger.error("cannot read the log back", metadata: ["log.path": "\(problem.path)", "error": "\(problem)"])
            }
            return try answer(Self.apiError(error), request, context)
        } catch let error as HTTPResponseError {
            if error.status == .notFound, let allowed = routes.allowedMethods(for: request.uri.path) {
                let allow = allowed.joined(separator: ", ")
                routes.nameRoute(of: request, in: context)
                // Through `answer`, as every refusal: on a web client's path (a browser's GET of
                // /sign-out), a page.
                return try answer(APIError(.methodNotAllowed, "\(request.uri.path) does not take \(request.method); it takes \(allow)", headers: [.allow: allow]), request, context)
            }
            if error.status == .notFound, let web, request.method == .get || request.method == .head, MediaType.asksForPage(request) {
                // A person who typed or followed a wrong address: a page with the way back (an
                // answer that depends on `Accept`, as the API's error would be).
                return web.problem(APIError(.notFound, "there is no page at \(request.uri.path)", headers: [.vary: "Accept"]), request)
            }
            var message = error.status.reasonPhrase
            if error.status == .notFound {
                message = "no such resource: \(request.method) \(request.uri.path)"
                if let meant = routes.suggestion(for: request.uri.path, method: request.method.rawValue) {
                    message += " (did you mean \(meant)?)"
                }
            }
            return try answer(APIError(error.status, message), request, context)
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(error)"])
            return try answer(APIError(.internalServerError, "the server failed to answer; see its log"), request, context)
        }
    }

    /// `error` as the API's JSON (or XML), or as a page on the web client's paths.
    private func answer(_ error: APIError, _ request: Request, _ context: Context) throws -> Response {
        if let web, WebRoutes.serves(request.uri.path) { return web.problem(error, request) }
        return try error.response(from: request, context: context)
    }

    /// Whether `problem` is a durable line that could not be read back (history, the feed, an
    /// idempotent repeat), rather than a write that failed.
    static func isReadBack(_ problem: LogError) -> Bool {
        problem.kind == .unreadable || problem.kind == .invalidLine
    }

    /// How a store's refusal reads over HTTP.
    static func apiError(_ error: StoreError) -> APIError {
        switch error {
        case .invalid(let problems):
            APIError(.unprocessableContent, "the announcement is not valid: " + problems.map(\.description).joined(separator: "; "), fieldErrors: problems)
        case .notFound(let id):
            APIError(.notFound, "announcement \(id) does not exist (it may have been deleted)")
        case .notOwn(let id, _):
            // Only an author's writes are limited to its own announcements. Who created it is the
            // audit trail's to tell, not this answer's.
            APIError.forbidden(needs: .changeAny, role: .author, "announcement \(id) was created by another token, and an author edits and deletes only what it created")
        case .erased:
            APIError(.gone, "\(error)")
        case .needsUpgrade:
            APIError(.conflict, "\(error)")
        case .unsupported:
            APIError(.notImplemented, "\(error)")
        case .revisionMismatch(let id, AnnouncementTag.unseen, let current):
            APIError(.preconditionFailed, "If-None-Match: announcement \(id) exists (it is at revision \(current)), made through another node that this one had not heard from yet: nothing was changed; fetch it for its ETag and retry")
        case .revisionMismatch(let id, let expected, let current) where expected <= 0:
            APIError(.preconditionFailed, "If-Match names no revision of announcement \(id) (it is at revision \(current)): fetch it again for its ETag and send that back as it came (If-Match compares strongly: a weak W/ tag never matches)")
        case .revisionMismatch(let id, _, let current):
            APIError(.preconditionFailed, "announcement \(id) has changed (it is at revision \(current)): fetch it again and retry")
        case .keyReused:
            APIError(.unprocessableContent, "\(error)")
        // Where the log is (its path, its database) is the server log's to tell, not a client's.
        case .log(let problem) where isReadBack(problem):
            APIError(.serviceUnavailable, "the log cannot be read back right now; lists and single announcements still work. \(problem.placeless)")
        case .log(let problem) where problem.kind == .locked:
            // The writer role is held elsewhere (several nodes): it moves, or a stalled holder loses it.
            APIError(.serviceUnavailable, "the log cannot be written right now; reads still work. \(problem.placeless)", headers: [.retryAfter: "1"])
        case .log(let problem) where problem.kind == .sealsLeft:
            // The erased event is durable; its overwrite failed (the server's log says why): the
            // log takes writes, and erasing again retries the overwrite.
            APIError(.serviceUnavailable, problem.placeless)
        case .log(let problem) where problem.kind == .copiesLeft:
            // An erasure done but for a copy of the texts it could not delete: the log itself
            // takes writes.
            APIError(.serviceUnavailable, problem.placeless)
        case .log(let problem):
            APIError(.serviceUnavailable, "the log cannot be written right now; reads still work. \(problem.placeless)")
        case .closed:
            APIError(.serviceUnavailable, "the log cannot be written right now; reads still work. \(error)")
        case .notReady(let message):
            APIError(.serviceUnavailable, message, headers: [.retryAfter: "1"])
        }
    }
}
