import AnnouncementsDomain
import AnnouncementsStore
import AnnouncementsWeb
import HTTPTypes
import Hummingbird

/// The web client: pages at `/` (the board), `/a/{id}` (an announcement) and below it, rendered
/// by the server with every title in the first answer; forms that post back here, acting for
/// the token signed in with its session cookie (`WebSession`). What a page offers follows what the
/// signed-in role may do (`Permission`), and every write goes through the same store calls as
/// the API's.
struct WebRoutes: Sendable {
    let store: EventStore
    let access: Access
    let pages: WebPages
    let maxRequestBytes: Int

    /// Announcements on one page of the board.
    static let pageSize = 20

    func add(to router: Router<AnnouncementsRequestContext>) {
        router.get("/") { request, _ in try await board(request) }
        router.get("a/:id") { request, context in try announcement(request, context) }
        router.get("a/:id/history") { request, context in try await history(request, context) }
        router.get("new") { request, _ in try editorForNew(request) }
        router.get("a/:id/edit") { request, context in try editor(request, context) }
        router.get("a/:id/delete") { request, context in try deleteQuestion(request, context) }
        router.get("a/:id/erase") { request, context in try eraseQuestion(request, context) }
        router.get("sign-in") { request, _ in signInForm(request) }
        router.get("assets/:name") { request, _ in
            guard let asset = WebAssets.asset(at: Substring(request.uri.path)) else {
                throw APIError(.notFound, "no such asset: \(request.uri.path) (a page of an older release names it; reload the page)")
            }
            return Response.asset(asset, request)
        }
        addForms(to: router)
    }

    /// Whether `path` is one of the web client's: its errors are pages too.
    static func serves(_ path: String) -> Bool {
        path == "/" || path == "/new" || path == "/sign-in" || path == "/sign-out" || path.hasPrefix("/a/") || path.hasPrefix("/assets/")
    }

    // MARK: - Pages

    private func board(_ request: Request) async throws -> Response {
        let caller = try reader(request)
        let chrome = chrome(caller)
        let parameters = request.uri.queryParameters
        let offset = try ReadRoutes.wholeNumber(parameters["offset"].map(String.init), name: "offset", default: 0, minimum: 0)
        let query = PageQuery(offset: offset, limit: Self.pageSize, sort: .id, order: .desc)
        if let past = try pastPoint(request) {
            guard caller?.role.may(.audit) == true else { throw try signInOr(.audit, caller, request) }
            let (model, _) = try await store.model(asOf: .time(past))
            let erased = try await erasedSince(past)
            let page = BoardPage(chrome: chrome, mode: .past(past), page: model.announcements(query), offset: offset, pageSize: Self.pageSize, seq: model.seq, erased: erased)
            return .page(pages.render(page), request)
        }
        let snapshot = store.snapshot
        // A search box sent empty is the board; a search that cannot be made says why, on the board.
        let searched: String?
        do throws(APIError) {
            searched = try ReadRoutes.formValue(named: "q", in: request.uri.query)
        } catch {
            return searchProblem("The search in the address is not valid percent-encoded UTF-8.", text: "", chrome: chrome, seq: snapshot.seq, request)
        }
        if let text = searched, !text.allSatisfy(\.isWhitespace) {
            let search: SearchQuery
            do throws(SearchQuery.Problem) {
                search = try SearchQuery.checked(text)
            } catch {
                return searchProblem(Self.sentence(error.describing("the search")), text: text, chrome: chrome, seq: snapshot.seq, request)
            }
            let found = try await store.search(search, in: snapshot, offset: offset, limit: Self.pageSize)
            let page = BoardPage(chrome: chrome, mode: .search(text), page: found, offset: offset, pageSize: Self.pageSize, seq: snapshot.seq)
            return .page(pages.render(page), request)
        }
        let page = BoardPage(chrome: chrome, mode: .now, page: snapshot.announcements(query), offset: offset, pageSize: Self.pageSize, seq: snapshot.seq)
        return .page(pages.render(page), request)
    }

    /// The board with the search box holding `text` and `problem`, what is wrong with it (a
    /// sentence), nothing found: a 400.
    private func searchProblem(_ problem: String, text: String, chrome: PageChrome, seq: Int, _ request: Request) -> Response {
        let empty = Page<Announcement>(items: [], total: 0)
        let page = BoardPage(chrome: chrome, mode: .search(text), page: empty, offset: 0, pageSize: Self.pageSize, seq: seq, problem: problem)
        return .page(pages.render(page), request, status: .badRequest)
    }

    private func announcement(_ request: Request, _ context: AnnouncementsRequestContext) throws -> Response {
        let caller = try reader(request)
        let id = try AnnouncementTag.id(request, context)
        let snapshot = store.snapshot
        guard let announcement = snapshot.announcement(id: id) else { throw gone(id, caller) }
        return .page(pages.render(AnnouncementPage(chrome: chrome(caller), announcement: announcement, seq: snapshot.seq)), request)
    }

    private func history(_ request: Request, _ context: AnnouncementsRequestContext) async throws -> Response {
        let caller = try signedIn(request, may: .audit)
        let id = try AnnouncementTag.id(request, context)
        guard let history = try await store.history(id: id) else { throw APIError(.notFound, "announcement \(id) was never created") }
        return .page(pages.render(HistoryPage(chrome: chrome(caller), id: id, events: history.map(\.event))), request)
    }

    private func editorForNew(_ request: Request) throws -> Response {
        let caller = try signedIn(request, may: .create)
        return .page(pages.render(EditorPage.new(chrome: chrome(caller), key: Self.newKey())), request)
    }

    private func editor(_ request: Request, _ context: AnnouncementsRequestContext) throws -> Response {
        let (caller, announcement) = try changeable(request, context)
        return .page(pages.render(EditorPage.edit(chrome: chrome(caller), announcement, key: Self.newKey())), request)
    }

    private func deleteQuestion(_ request: Request, _ context: AnnouncementsRequestContext) throws -> Response {
        let (caller, announcement) = try changeable(request, context)
        let page = ConfirmPage.delete(chrome: chrome(caller), id: announcement.id, title: announcement.title, revision: announcement.revision, key: Self.newKey())
        return .page(pages.render(page), request)
    }

    private func eraseQuestion(_ request: Request, _ context: AnnouncementsRequestContext) throws -> Response {
        let (caller, id) = try erasable(request, context)
        // Erased already: nothing to ask. The history says when, by whom and why.
        if store.snapshot.erased[id] != nil { return .seeOther("/a/\(id)/history") }
        let page = ConfirmPage.erase(chrome: chrome(caller), id: id, title: store.snapshot.announcement(id: id)?.title)
        return .page(pages.render(page), request)
    }

    /// The sign-in form; after it, the page `next` names, or (the header's "Sign in" link, which
    /// names none) the page of this site it was opened from.
    private func signInForm(_ request: Request) -> Response {
        let next = request.uri.queryParameters["next"].map(String.init) ?? Self.cameFrom(request)
        let page = SignInPage(chrome: chrome(access.sessionCaller(request)), next: Self.next(next))
        return .page(pages.render(page), request)
    }

    /// The path (and query) of the page of this site that linked to this one, from `Referer`
    /// (which the pages send to their own site: `Referrer-Policy: same-origin`); nil for another
    /// site's, none, or the sign-in page itself.
    static func cameFrom(_ request: Request) -> String? {
        guard let referer = request.headers[.referer] else { return nil }
        for origin in WebSession.ownOrigins(request) where referer.hasPrefix(origin + "/") {
            let path = String(referer.dropFirst(origin.count))
            return path == "/sign-in" || path.hasPrefix("/sign-in?") ? nil : path
        }
        return nil
    }

    // MARK: - Who may see what

    /// The page chrome for `caller`.
    func chrome(_ caller: Access.Caller?) -> PageChrome {
        PageChrome(name: caller?.name, role: caller?.role)
    }

    /// The reader of a page of live announcements: anyone, or under `reads: token` anyone signed in.
    private func reader(_ request: Request) throws -> Access.Caller? {
        let caller = access.sessionCaller(request)
        if access.reads == .token, caller == nil { throw signIn(request, "this board is for signed-in readers only") }
        return caller
    }

    /// The signed-in caller, whose role must have `permission`.
    func signedIn(_ request: Request, may permission: Permission) throws -> Access.Caller {
        let caller = access.sessionCaller(request)
        guard let caller, caller.role.may(permission) else { throw try signInOr(permission, caller, request) }
        return caller
    }

    /// What a caller without `permission` gets: the way to sign in, or a 403 naming the roles.
    private func signInOr(_ permission: Permission, _ caller: Access.Caller?, _ request: Request) throws -> Error {
        guard let caller else { return signIn(request, "sign in with a token of role \(permission.rolesDescription) for this page") }
        return APIError.forbidden(needs: permission, role: caller.role, "you are signed in as `\(caller.name)`, whose role is \(caller.role)")
    }

    /// A 401 whose page offers to sign in and come back to this one (its query too: a past board,
    /// a search).
    func signIn(_ request: Request, _ message: String) -> APIError {
        var error = APIError(.unauthorized, message)
        let here = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        error.details = [.init("signIn", .string("/sign-in?next=" + QueryText.encoded(here)))]
        return error
    }

    /// The signed-in caller who may change announcement `id` (an author: only its own), and it.
    func changeable(_ request: Request, _ context: AnnouncementsRequestContext) throws -> (Access.Caller, Announcement) {
        let caller = try signedIn(request, may: .changeOwn)
        let id = try AnnouncementTag.id(request, context)
        guard let announcement = store.snapshot.announcement(id: id) else { throw gone(id, caller) }
        guard chrome(caller).mayChange(createdBy: announcement.createdBy) else {
            throw ErrorMiddleware<AnnouncementsRequestContext>.apiError(.notOwn(id: id, createdBy: announcement.createdBy))
        }
        return (caller, announcement)
    }

    /// The signed-in admin and the announcement an erasure's page is about: one ever created (its
    /// question and its form alike; a 404 otherwise).
    func erasable(_ request: Request, _ context: AnnouncementsRequestContext) throws -> (Access.Caller, Int) {
        let caller = try signedIn(request, may: .erase)
        let id = try AnnouncementTag.id(request, context)
        guard store.lastEvent(of: id) != nil else { throw APIError(.notFound, "announcement \(id) was never created") }
        return (caller, id)
    }

    /// The 404 of an announcement that is not live: an auditor is pointed at its history.
    func gone(_ id: Int, _ caller: Access.Caller?) -> APIError {
        guard store.lastEvent(of: id) != nil else { return APIError(.notFound, "announcement \(id) does not exist") }
        var error = APIError(.notFound, store.snapshot.erased[id] == nil ? "announcement \(id) was deleted" : "announcement \(id) was erased")
        if caller?.role.may(.audit) == true { error.details = [.init("history", .string("/a/\(id)/history"))] }
        return error
    }

    // MARK: - Pieces

    /// The past moment the board asks for: `asOf` (RFC 3339), or the form's `at` (a
    /// `datetime-local` value, in the reader's time zone) with `tz` (its offset from UTC in
    /// minutes, as JavaScript's `getTimezoneOffset` gives it; UTC without).
    private func pastPoint(_ request: Request) throws(APIError) -> Timestamp? {
        let parameters = request.uri.queryParameters
        if let text = parameters["asOf"].map(String.init) {
            guard let time = Timestamp(rfc3339: text) else {
                throw APIError(.badRequest, "`asOf` must be a time like 2026-11-21T09:30:00Z, not \"\(VisibleText.escaped(text))\"")
            }
            return time
        }
        guard let local = parameters["at"].map(String.init), !local.isEmpty else { return nil }
        let offset = try ReadRoutes.wholeNumber(parameters["tz"].map(String.init), name: "tz", default: 0, minimum: .min)
        guard (-24 * 60...24 * 60).contains(offset) else {
            throw APIError(.badRequest, "`tz` must be a time zone's offset from UTC in minutes, from -1440 to 1440, not \(offset)")
        }
        let seconds = local.count == 16 ? local + ":00" : local
        guard let time = Timestamp(rfc3339: seconds + "Z") else {
            throw APIError(.badRequest, "the board's time must be a date and time like 2026-11-21T09:30, not \"\(VisibleText.escaped(local))\"")
        }
        guard let utc = time.adding(minutes: offset) else {
            throw APIError(.badRequest, "the board's time \"\(VisibleText.escaped(local))\" with `tz` \(offset) falls outside the years 0000 to 9999")
        }
        return utc
    }

    /// The announcements erased since `time` that were live then, with who erased each, when and why.
    private func erasedSince(_ time: Timestamp) async throws -> [BoardPage.Erased] {
        var erased: [BoardPage.Erased] = []
        for id in store.snapshot.erased.keys.sorted(by: >) {
            guard let events = try await store.history(id: id)?.map(\.event) else { continue }
            var liveThen = false
            for event in events where event.at <= time {
                switch event.type {
                case .created: liveThen = true
                case .deleted, .erased: liveThen = false
                case .edited: break
                }
            }
            guard liveThen, let last = events.last, case .erased(let reason) = last.change, last.at > time else { continue }
            erased.append(BoardPage.Erased(id: id, by: last.by, at: last.at, reason: reason))
        }
        return erased
    }

    /// `next` if it is a path on this site, else the board: a sign-in never sends anyone elsewhere.
    /// A browser drops tabs and line breaks from a URL and reads `\\` as `/`, so `/<TAB>/evil` or
    /// `/\\evil` would be `//evil`, another host: none of them, nor any space, is taken.
    static func next(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"),
              !next.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || $0 == "\\" }),
              !next.dropFirst().hasPrefix("/")
        else { return "/" }
        return next
    }

    /// A form's idempotency key: a post sent twice (a double click, a reload) writes once.
    static func newKey() -> String {
        (0..<4).map { _ in String(UInt64.random(in: .min ... .max), radix: 16) }.joined(separator: "-")
    }
}
