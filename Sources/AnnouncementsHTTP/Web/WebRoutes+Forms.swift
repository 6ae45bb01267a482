import AnnouncementsDomain
import AnnouncementsStore
import AnnouncementsWeb
import Hummingbird

/// The web client's forms: sign in and out, post, edit, delete and erase. Each post must come
/// from this site's own pages (`WebSession.requireSameOrigin`), acts for the token signed in, and
/// answers `303 See Other` to the page to read next; a refused write shows its form again with
/// what was sent and what is wrong, by field.
extension WebRoutes {
    func addForms(to router: Router<AnnouncementsRequestContext>) {
        router.post("sign-in") { request, _ in try await signIn(request) }
        router.post("sign-out") { request, _ in try signOut(request) }
        router.post("new") { request, _ in try await create(request) }
        router.post("a/:id/edit") { request, context in try await edit(request, context) }
        router.post("a/:id/delete") { request, context in try await delete(request, context) }
        router.post("a/:id/erase") { request, context in try await erase(request, context) }
    }

    private func signIn(_ request: Request) async throws -> Response {
        try WebSession.requireSameOrigin(request)
        let form = try await FormBody.read(request, maxBytes: 64 * 1024)
        let next = Self.next(form["next"])
        guard let token = form["token"], access.caller(token: token) != nil else {
            let page = SignInPage(chrome: .signedOut, next: next, problem: "That token is not one this server knows. Check it with whoever gave it to you; it may have been revoked.")
            // The token refused is the form's, not a session's.
            return .page(pages.render(page), request, status: .unauthorized, authError: form["token"]?.isEmpty == false ? "invalid_token" : "no_token")
        }
        return .seeOther(next, setCookie: WebSession.signIn(token, request))
    }

    /// Signing out also clears what the browser kept of this site's pages (`Clear-Site-Data`):
    /// Chromium keeps a signed-in page (`no-store`) in its back/forward cache, and Back after
    /// signing out showed it again, history and all. (The pages' script reloads such a page when
    /// it is shown from that cache, for a browser that does not take the header.)
    private func signOut(_ request: Request) throws -> Response {
        try WebSession.requireSameOrigin(request)
        var response = Response.seeOther("/", setCookie: WebSession.signOut(request))
        response.headers[.clearSiteData] = "\"cache\""
        return response
    }

    private func create(_ request: Request) async throws -> Response {
        try WebSession.requireSameOrigin(request)
        let form = try await FormBody.read(request, maxBytes: maxRequestBytes)
        var page = EditorPage.new(chrome: chrome(access.sessionCaller(request)), key: Self.key(form) ?? Self.newKey())
        page.keep(title: form["title"] ?? "", body: form["body"] ?? "")
        do {
            let caller = try signedIn(request, may: .create)
            let created = try await store.create(page.draft, by: caller.name, key: Self.key(form))
            return .seeOther("/a/\(created.id)")
        } catch {
            return try refused(page, error, request)
        }
    }

    private func edit(_ request: Request, _ context: AnnouncementsRequestContext) async throws -> Response {
        try WebSession.requireSameOrigin(request)
        let id = try AnnouncementTag.id(request, context)
        let form = try await FormBody.read(request, maxBytes: maxRequestBytes)
        let revision = try Self.revision(form)
        var page = EditorPage(
            chrome: chrome(access.sessionCaller(request)), heading: "Edit announcement \(id)", action: "/a/\(id)/edit", revision: revision,
            key: Self.key(form) ?? Self.newKey(), title: "", body: "", submit: "Save", cancel: "/a/\(id)"
        )
        page.keep(title: form["title"] ?? "", body: form["body"] ?? "")
        do {
            let caller = try signedIn(request, may: .changeOwn)
            _ = try await store.update(
                id: id, AnnouncementPatch(replacingWith: page.draft), by: caller.name, scope: WriteScope(caller.role),
                expectedRevision: revision, key: Self.key(form)
            )
            return .seeOther("/a/\(id)")
        } catch {
            guard case StoreError.revisionMismatch = error, let current = store.snapshot.announcement(id: id) else {
                return try refused(page, error, request)
            }
            // Someone else's change came first: theirs against this one, and nothing saved.
            page.show(conflictWith: current)
            return .page(pages.render(page), request, status: .conflict)
        }
    }

    /// The editor again after a refusal (no sign-in, the role, the store's), with what was sent,
    /// each problem by its field, or the refusal in words; what was typed is never lost. Its key
    /// too: a 503 may come after a commit whose answer was lost, and sending the form again must
    /// not make the write twice (a key no write took is as good as a new one); but a new one
    /// after a refusal because another write took it. Any other error is rethrown.
    private func refused(_ page: EditorPage, _ error: any Error, _ request: Request) throws -> Response {
        let refusal: APIError
        switch error {
        case let error as APIError: refusal = error
        case let error as StoreError: refusal = ErrorMiddleware<AnnouncementsRequestContext>.apiError(error)
        default: throw error
        }
        var page = page
        // The key was taken by a write that landed (a form sent again after it, changed): a new
        // one, or every send of this form would be refused the same way.
        if case StoreError.keyReused = error { page.key = Self.newKey() }
        var message = Self.sentence(refusal.message)
        switch refusal.status {
        case .unauthorized: message += " Your text is kept below: sign in again in another tab, then send it."
        case .notFound: message += " Your text is still below: copy it to keep it."
        default: break
        }
        page.show(refusal.fieldErrors.map { ($0.field, $0.message) }, otherwise: message)
        return .page(pages.render(page), request, status: refusal.status)
    }

    private func delete(_ request: Request, _ context: AnnouncementsRequestContext) async throws -> Response {
        try WebSession.requireSameOrigin(request)
        let caller = try signedIn(request, may: .changeOwn)
        let id = try AnnouncementTag.id(request, context)
        let form = try await FormBody.read(request, maxBytes: 64 * 1024)
        let revision = try Self.revision(form)
        do {
            try await store.delete(id: id, by: caller.name, scope: WriteScope(caller.role), expectedRevision: revision, key: Self.key(form))
            return .seeOther("/")
        } catch {
            guard case .revisionMismatch = error, let current = store.snapshot.announcement(id: id) else { throw error }
            var page = ConfirmPage.delete(chrome: chrome(caller), id: id, title: current.title, revision: current.revision, key: Self.newKey())
            page.problem = "It was changed \(DisplayTime(current.updatedAt).text), after you opened it: nothing was deleted. Read it again before you delete it."
            return .page(pages.render(page), request, status: .conflict)
        }
    }

    private func erase(_ request: Request, _ context: AnnouncementsRequestContext) async throws -> Response {
        try WebSession.requireSameOrigin(request)
        let (caller, id) = try erasable(request, context)
        let form = try await FormBody.read(request, maxBytes: 64 * 1024)
        let reason = form["reason"] ?? ""
        if let problem = ValidationRules.isBlank(reason) ? "is required" : ValidationRules.problem(reason: reason) {
            var page = ConfirmPage.erase(chrome: chrome(caller), id: id, title: store.snapshot.announcement(id: id)?.title)
            page.reasonValue = reason
            page.reasonError = "The reason " + problem
            return .page(pages.render(page), request, status: .unprocessableContent)
        }
        do throws(StoreError) {
            _ = try await store.erase(id: id, by: caller.name, reason: reason)
        } catch {
            // Erased already: the form sent twice (a double click, a reload), or by an admin
            // before this one. What was asked for is done; the history says by whom.
            guard case .erased = error else { throw error }
        }
        return .seeOther("/a/\(id)/history")
    }

    // MARK: - Pieces

    /// The revision the form was filled from: a write fails if the announcement has changed since.
    private static func revision(_ form: FormBody) throws(APIError) -> Int {
        guard let text = form["revision"], let revision = Int(text), revision > 0 else {
            throw APIError(.badRequest, "the form has no valid `revision`: open the announcement again and edit it from there")
        }
        return revision
    }

    /// The form's idempotency key, when it holds one the store takes.
    private static func key(_ form: FormBody) -> String? {
        guard let key = form["key"], (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else { return nil }
        return key
    }

    /// `message` as a sentence: capitalized, ending with a full stop.
    static func sentence(_ message: String) -> String {
        guard let first = message.first else { return message }
        let text = first.uppercased() + message.dropFirst()
        return text.hasSuffix(".") ? text : text + "."
    }
}
