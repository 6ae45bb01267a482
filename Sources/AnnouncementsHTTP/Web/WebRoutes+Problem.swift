import AnnouncementsWeb
import HTTPTypes
import Hummingbird

extension WebRoutes {
    /// A refusal on one of the web client's paths, as a page: a reader who must sign in first is
    /// sent to the sign-in page (and back here after it); anything else is said in words, with
    /// its status.
    func problem(_ error: APIError, _ request: Request) -> Response {
        let signIn = error.details.first { $0.name == "signIn" }.flatMap { detail -> String? in
            if case .string(let path) = detail.value { return path }
            return nil
        }
        if error.status == .unauthorized, let signIn, request.method == .get || request.method == .head {
            return .seeOther(signIn)
        }
        let heading: String
        switch error.status {
        case .notFound: heading = "Not found"
        case .forbidden: heading = "Not allowed"
        case .unauthorized: heading = "Sign in first"
        // A 409 here is the log's state, not an edit's race (the forms answer those themselves): an
        // erasure that needs the log upgraded first, a position past its end.
        case .conflict: heading = "Not possible with this log"
        case .gone: heading = "Erased"
        case .serviceUnavailable: heading = "Not available right now"
        default: heading = error.status.reasonPhrase
        }
        var page = ProblemPage(chrome: chrome(access.sessionCaller(request)), heading: heading, message: Self.sentence(error.message), signIn: signIn)
        if let history = error.details.first(where: { $0.name == "history" }), case .string(let path) = history.value {
            page.history = path
        }
        // A page's reader signs in with a cookie, not a bearer token: no challenge for one.
        var response = Response.page(pages.render(page), request, status: error.status)
        for field in error.headers where field.name != .contentType && field.name != .wwwAuthenticate { response.headers.append(field) }
        return response
    }
}
