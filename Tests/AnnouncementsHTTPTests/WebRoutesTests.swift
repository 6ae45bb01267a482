import AnnouncementsDomain
import AnnouncementsStore
import AnnouncementsWeb
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing
@testable import AnnouncementsHTTP

/// The web client's routes on a live server: pages, the session cookie, forms and their refusals.
/// (Their behaviour in a real browser is scripts/browser_test.py's.)
@Suite struct WebRoutesTests {
    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    /// Headers of a form post from this site's own page (or from `origin`; nil: none), signed in
    /// with `token`.
    static func post(_ token: String, origin: String? = WebRoutesTests.origin) -> HTTPFields {
        var headers = form
        headers[.cookie] = "\(WebSession.cookieName)=\(token)"
        if let origin { headers[.origin] = origin }
        return headers
    }

    /// The origin of a live test's requests (HummingbirdTesting sends `Host: localhost`).
    static let origin = "http://localhost"

    @Test("GET / is a page: the titles in its first answer, the pages' CSP, no inline script, private to its reader, compressed")
    func board() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/", method: .get, headers: [.acceptEncoding: "gzip"]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(response.headers[.contentEncoding] == "gzip")
                #expect(response.headers[.contentSecurityPolicy] == SecurityHeaders.pagePolicy)
                #expect(response.headers[.cacheControl] == "private, no-cache" && response.headers[.vary] == "Cookie, Accept-Encoding")
            }
            try await client.execute(uri: "/", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(reference.allSatisfy { html.contains($0.title) })
                let titles = reference.map { html.range(of: $0.title)?.lowerBound }
                #expect(titles.compactMap { $0 } == titles.compactMap { $0 }.sorted(by: >), "newest first")
                #expect(html.contains("href=\"/sign-in\"") && !html.contains("New announcement"), "a visitor is offered to sign in, not to post")
            }
            try await client.execute(uri: "/?offset=-1", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8", "a page's error is a page")
                #expect(String(buffer: response.body).contains("must be a whole number of at least 0"))
            }
        }
    }

    @Test("the pages' policy allows no inline script, no eval, nothing from elsewhere, and no framing")
    func pagePolicy() {
        let policy = SecurityHeaders.pagePolicy
        #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'") && policy.contains("base-uri 'none'"))
        #expect(!policy.contains("unsafe") && !policy.contains("*") && !policy.contains("data:"))
    }

    @Test("signing in sets an HttpOnly, SameSite=Lax cookie (Secure behind TLS), only for a configured token, and only from this site's pages; signing out expires it")
    func signIn() async throws {
        try await withServer { client, _ in
            var headers = Self.form
            headers[.origin] = Self.origin
            try await client.execute(uri: "/sign-in", method: .post, headers: headers, body: body("token=alice-secret&next=%2Fnew")) { response in
                #expect(response.status == .seeOther && response.headers[.location] == "/new")
                #expect(response.headers[.setCookie] == "\(WebSession.cookieName)=alice-secret; Path=/; HttpOnly; SameSite=Lax")
            }
            headers[.xForwardedProto] = "https"
            try await client.execute(uri: "/sign-in", method: .post, headers: headers, body: body("token=alice-secret&next=https%3A%2F%2Fevil.example")) { response in
                #expect(response.headers[.location] == "/", "a sign-in never sends anyone elsewhere")
                #expect(response.headers[.setCookie] == "__Host-\(WebSession.cookieName)=alice-secret; Path=/; HttpOnly; SameSite=Lax; Secure")
            }
            // A browser drops tabs and line breaks from a URL and reads \ as /: each of these is `//evil.example`.
            for next in ["/%09/evil.example", "/%0A/evil.example", "/%5Cevil.example", "/%2F/evil.example", "%2F%2Fevil.example"] {
                try await client.execute(uri: "/sign-in", method: .post, headers: headers, body: body("token=alice-secret&next=\(next)")) { response in
                    #expect(response.headers[.location] == "/", "\(next)")
                }
            }
            try await client.execute(uri: "/a/1", method: .get, headers: [.cookie: "__Host-\(WebSession.cookieName)=alice-secret; \(WebSession.cookieName)=arthur-secret"]) { response in
                #expect(String(buffer: response.body).contains("Signed in as <strong>alice</strong>"), "the __Host- cookie wins over one a sibling subdomain could set")
            }
            try await client.execute(uri: "/sign-in", method: .post, headers: headers, body: body("token=carol-secret")) { response in
                #expect(response.status == .unauthorized && response.headers[.setCookie] == nil)
                #expect(String(buffer: response.body).contains("not one this server knows"))
            }
            headers[.origin] = "http://evil.example"
            try await client.execute(uri: "/sign-in", method: .post, headers: headers, body: body("token=alice-secret")) { response in
                #expect(response.status == .forbidden && response.headers[.setCookie] == nil)
            }
            try await client.execute(uri: "/sign-out", method: .post, headers: Self.post("alice-secret")) { response in
                #expect(response.status == .seeOther && response.headers[.setCookie]?.contains("Max-Age=0") == true)
                // What the browser kept of the signed-in pages goes too (its back/forward cache).
                #expect(response.headers[.clearSiteData] == "\"cache\"")
            }
        }
    }

    @Test("a web 401 says why in its access-log line (auth.error), as the API's refusals do: a refused sign-in, a form sent signed out or with a token no longer configured; never a 403; the note never leaves the server, whatever the log level")
    func refusalsLogged() async throws {
        let lines = LogLines()
        let logger = Logger(label: "test", factory: { _ in lines })
        var form = Self.form
        form[.origin] = Self.origin
        let cases: [(method: HTTPRequest.Method, uri: String, headers: HTTPFields, body: String, status: HTTPResponse.Status, logged: String?)] = [
            (.post, "/sign-in", form, "token=carol-secret", .unauthorized, "invalid_token"),
            (.post, "/sign-in", form, "token=", .unauthorized, "no_token"),
            (.post, "/sign-in", form, "next=%2F", .unauthorized, "no_token"),
            (.post, "/new", form, "title=Signed+out&body=", .unauthorized, "no_token"),
            (.post, "/new", Self.post("revoked-secret"), "title=Revoked&body=", .unauthorized, "invalid_token"),
            // Through the error middleware's page.
            (.post, "/a/1/delete", form, "", .unauthorized, "no_token"),
            (.post, "/new", Self.post("audrey-secret"), "title=An+auditor&body=", .forbidden, nil),
            (.post, "/sign-in", form, "token=alice-secret", .seeOther, nil),
        ]
        @Sendable func send(_ client: any TestClientProtocol) async throws {
            for (index, each) in cases.enumerated() {
                var headers = each.headers
                headers[.requestID] = "web-\(index)"
                try await client.execute(uri: each.uri, method: each.method, headers: headers, body: each.method == .post ? body(each.body) : nil) { response in
                    #expect(response.status == each.status, "\(each)")
                    #expect(response.headers[Challenge.pageError] == nil && response.headers[.wwwAuthenticate] == nil, "\(each): \(response.headers)")
                }
            }
        }
        try await withServer(logger: logger) { client, _ in try await send(client) }
        for (index, each) in cases.enumerated() {
            let line = lines.lines.first { $0.fields["request.id"] == "web-\(index)" }
            #expect(line != nil && line?.fields["auth.error"] == each.logged, "\(each): \(String(describing: line))")
        }
        #expect(!lines.lines.contains { $0.fields.values.contains { $0.contains("secret") } } && !lines.messages.joined().contains("secret"), "no token is logged")
        // A server that logs no access lines (above info) takes the note off all the same.
        try await withServer { client, _ in try await send(client) }
    }

    @Test("a page shown to a signed-in reader is kept by no cache (Back after sign-out must not show it); one shown to anyone, private and revalidated")
    func signedInPagesNotStored() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/a/1", method: .get, headers: [.cookie: "\(WebSession.cookieName)=alice-secret"]) { response in
                #expect(response.status == .ok && response.headers[.cacheControl] == "no-store")
                #expect(response.headers[.crossOriginOpenerPolicy] == "same-origin", "no other site's window keeps a handle on it")
            }
            try await client.execute(uri: "/a/1", method: .get) { response in
                #expect(response.status == .ok && response.headers[.cacheControl] == "private, no-cache")
            }
        }
    }

    @Test("a browser's GET of a path that takes only a post (/sign-out) is a 405 page with Allow, not the API's error")
    func methodNotAllowedPage() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/sign-out", method: .get, headers: [.accept: "text/html"]) { response in
                #expect(response.status == .methodNotAllowed && response.headers[.allow] == "POST, OPTIONS", "\(response.headers)")
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
            }
        }
    }

    @Test("the header's Sign in link goes back, after it, to the page of this site it was followed from (Referer), never to another site's", arguments: [
        ("http://localhost/a/2", "/a/2"), ("http://localhost/?q=fire", "/?q=fire"), ("https://evil.example/a/2", "/"),
        ("http://localhost.evil.example/a/2", "/"), ("http://localhost/sign-in?next=%2Fa%2F3", "/"), ("http://localhost//evil.example", "/"),
    ])
    func signInFromReferer(referer: String, next: String) async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/sign-in", method: .get, headers: [.referer: referer]) { response in
                #expect(response.status == .ok)
                let html = String(buffer: response.body)
                #expect(html.contains(#"name="next" value="\#(next.replacingOccurrences(of: "&", with: "&amp;"))""#), "\(referer): \(html)")
            }
            // A next the link names wins.
            try await client.execute(uri: "/sign-in?next=%2Fa%2F4", method: .get, headers: [.referer: referer]) { response in
                #expect(String(buffer: response.body).contains(#"name="next" value="/a/4""#))
            }
        }
    }

    @Test("a page that needs signing in sends there and back to itself, its query too (a past board, a search)")
    func signInComesBackWithQuery() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/?asOf=2026-01-01T00:00:00Z", method: .get) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location]?.hasPrefix("/sign-in?next=%2F%3FasOf%3D2026-01-01T00") == true, "\(response.headers[.location] ?? "none")")
            }
        }
    }

    @Test("a browser's form post that says Sec-Fetch-Site: same-origin is this site's, whatever Origin a proxy's Host rewrite makes it seem")
    func sameOriginBehindProxy() async throws {
        try await withServer { client, store in
            var headers = Self.post("alice-secret", origin: "https://board.intranet")
            headers[.secFetchSite] = "same-origin"
            try await client.execute(uri: "/new", method: .post, headers: headers, body: body("title=Behind+a+proxy&body=&key=proxy-1")) { response in
                #expect(response.status == .seeOther, "\(String(buffer: response.body))")
            }
            #expect(store.snapshot.count == reference.count + 1)
            headers[.secFetchSite] = "same-site"
            try await client.execute(uri: "/new", method: .post, headers: headers, body: body("title=From+a+sibling&body=&key=proxy-2")) { response in
                #expect(response.status == .forbidden, "a sibling subdomain's page is not this site's")
            }
            #expect(store.snapshot.count == reference.count + 1)
        }
    }

    @Test("a form post with the session cookie writes only from this site's own pages: another Origin, none, or Sec-Fetch-Site cross-site is a 403 that writes nothing")
    func forgedPosts() async throws {
        try await withServer { client, store in
            var crossSite = Self.post("alice-secret")
            crossSite[.secFetchSite] = "cross-site"
            for headers in [Self.post("alice-secret", origin: "http://evil.example"), Self.post("alice-secret", origin: nil), crossSite] {
                try await client.execute(uri: "/new", method: .post, headers: headers, body: body("title=Forged&body=")) { response in
                    #expect(response.status == .forbidden)
                    #expect(String(buffer: response.body).contains("Refused: "))
                }
            }
            #expect(store.snapshot.count == reference.count)
            try await client.execute(uri: "/new", method: .post, headers: Self.post("alice-secret"), body: body("title=Fire+drill&body=%3Cp%3EAt+ten%3C%2Fp%3E&key=k1")) { response in
                #expect(response.status == .seeOther && response.headers[.location] == "/a/7")
            }
            try await client.execute(uri: "/new", method: .post, headers: Self.post("alice-secret"), body: body("title=Fire+drill&body=%3Cp%3EAt+ten%3C%2Fp%3E&key=k1")) { response in
                #expect(response.headers[.location] == "/a/7", "a form sent twice writes once")
            }
            #expect(store.snapshot.announcement(id: 7)?.body == "<p>At ten</p>" && store.snapshot.count == reference.count + 1)
        }
    }

    @Test("the API takes the session cookie for reads only: an unsafe API request with it alone is a 401")
    func cookieReadsOnly() async throws {
        try await withServer { client, store in
            var headers: HTTPFields = [.cookie: "\(WebSession.cookieName)=alice-secret", .contentType: "application/json"]
            try await client.execute(uri: "/announcements", method: .post, headers: headers, body: body(#"{"title":"x"}"#)) { #expect($0.status == .unauthorized) }
            headers[.cookie] = "\(WebSession.cookieName)=audrey-secret"
            // What the cookie authorised is the signed-in reader's: no shared cache keeps it
            // (one keeps no answer to Authorization by itself).
            try await client.execute(uri: "/announcements/1/history", method: .get, headers: headers) { response in
                #expect(response.status == .ok && response.headers[.cacheControl] == "private, no-cache")
            }
            try await client.execute(uri: "/announcements/1/history", method: .get, headers: auditor) { response in
                #expect(response.status == .ok && response.headers[.cacheControl] == "no-cache")
            }
            headers[.cookie] = "\(WebSession.cookieName)=revoked"
            try await client.execute(uri: "/announcements/1/history", method: .get, headers: headers) { #expect($0.status == .unauthorized) }
            #expect(store.snapshot.count == reference.count)
        }
    }

    @Test("a refused post shows its form again with what was sent: a 422 by field, a conflict with the other change and nothing saved")
    func refusedForms() async throws {
        try await withServer { client, store in
            try await client.execute(uri: "/new", method: .post, headers: Self.post("alice-secret"), body: body("title=+++&body=%3Cp%3Ekept%3C%2Fp%3E&key=sent-key-1")) { response in
                #expect(response.status == .unprocessableContent)
                let html = String(buffer: response.body)
                #expect(html.contains("<p class=\"field-error\" id=\"title-error\">The title must not be blank</p>"))
                #expect(html.contains("&lt;p&gt;kept&lt;/p&gt;</textarea>"), "what was typed stays")
                // A refusal may come after a commit (a 503 whose outcome is unknown): sent again, the form must not write twice.
                #expect(html.contains("name=\"key\" value=\"sent-key-1\""), "the key it was sent with")
            }
            // Signed out meanwhile (or the token revoked): the text comes back, with what to do.
            try await client.execute(uri: "/new", method: .post, headers: Self.post("revoked"), body: body("title=Mine&body=%3Cp%3Elong+text%3C%2Fp%3E")) { response in
                #expect(response.status == .unauthorized)
                let html = String(buffer: response.body)
                #expect(html.contains("&lt;p&gt;long text&lt;/p&gt;</textarea>") && html.contains("value=\"Mine\"") && html.contains("sign in again in another tab"))
            }
            let revision = try #require(store.snapshot.announcement(id: 2)?.revision)
            _ = try await store.update(id: 2, AnnouncementPatch(title: "Theirs"), by: "bob")
            try await client.execute(uri: "/a/2/edit", method: .post, headers: Self.post("alice-secret"), body: body("title=Mine&body=&revision=\(revision)&key=sent-key-2")) { response in
                #expect(response.status == .conflict)
                let html = String(buffer: response.body)
                #expect(html.contains("name=\"key\" value=\"sent-key-2\""), "the key it was sent with")
                #expect(html.contains("<del>Theirs</del><ins>Mine</ins>"))
                #expect(html.contains("name=\"revision\" value=\"\(revision + 5)\""), "saving again replaces theirs")
            }
            #expect(store.snapshot.announcement(id: 2)?.title == "Theirs")
            try await client.execute(uri: "/a/2/edit", method: .post, headers: Self.post("arthur-secret"), body: body("title=Mine&body=&revision=\(revision + 5)")) { response in
                #expect(response.status == .forbidden)
                #expect(String(buffer: response.body).contains("this needs role editor or admin"))
            }
            try await client.execute(uri: "/a/2/delete", method: .post, headers: Self.post("alice-secret"), body: body("revision=\(revision)")) { response in
                #expect(response.status == .conflict)
            }
            #expect(store.snapshot.announcement(id: 2) != nil)
            // A key a write took (the form sent, landed, then sent again changed, from Back): a
            // 422 that says so, and the form comes back with a new key, so that sending it works.
            try await client.execute(uri: "/new", method: .post, headers: Self.post("alice-secret"), body: body("title=Landed&body=&key=sent-key-3")) { response in
                #expect(response.status == .seeOther)
            }
            try await client.execute(uri: "/new", method: .post, headers: Self.post("alice-secret"), body: body("title=Landed+again&body=&key=sent-key-3")) { response in
                #expect(response.status == .unprocessableContent)
                let html = String(buffer: response.body)
                #expect(html.contains("already used") && !html.contains("value=\"sent-key-3\""), "a new key")
                let key = try #require(html.range(of: "name=\"key\" value=\"").map { String(html[$0.upperBound...].prefix { $0 != "\"" }) })
                try await client.execute(uri: "/new", method: .post, headers: Self.post("alice-secret"), body: body("title=Landed+again&body=&key=\(key)")) { again in
                    #expect(again.status == .seeOther, "sent with the new key, it is made")
                }
            }
        }
    }

    @Test("an edit from the form whose text comes back with a browser's CR LF line breaks changes the title alone: the text keeps its LFs")
    func crlfFromTheForm() async throws {
        try await withServer { client, store in
            let text = "<p>First line</p>\n<p>Second line</p>\n"
            let created = try await store.create(AnnouncementDraft(title: "Lines", body: text), by: "alice")
            let before = try #require(store.snapshot.announcement(id: created.id))
            let sent = text.replacingOccurrences(of: "\n", with: "\r\n").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            try await client.execute(uri: "/a/\(created.id)/edit", method: .post, headers: Self.post("alice-secret"), body: body("title=Retitled&body=\(sent)&revision=\(before.revision)")) { response in
                #expect(response.status == .seeOther)
            }
            let after = try #require(store.snapshot.announcement(id: created.id))
            #expect(after.title == "Retitled")
            #expect(after.body == text, "the text as it was, no CR")
            let lines = try #require(await store.historyLines(id: created.id))
            let last = String(decoding: try #require(lines.last), as: UTF8.self)
            #expect(!last.contains("\"body\""), "the edit's event names the title alone: \(last)")
        }
    }

    @Test("pages for a role send a visitor to sign in and back, and tell a signed-in token without the role which roles may")
    func pagesNeedRoles() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/a/1/history", method: .get) { response in
                #expect(response.status == .seeOther && response.headers[.location] == "/sign-in?next=%2Fa%2F1%2Fhistory")
            }
            try await client.execute(uri: "/a/1/history", method: .get, headers: [.cookie: "\(WebSession.cookieName)=alice-secret"]) { response in
                #expect(response.status == .forbidden)
                #expect(String(buffer: response.body).contains("this needs role auditor or admin"))
                #expect(response.headers[.wwwAuthenticate] == nil, "a page's reader signs in with a cookie: no bearer challenge")
            }
            try await client.execute(uri: "/a/1/history", method: .get, headers: [.cookie: "\(WebSession.cookieName)=audrey-secret"]) { response in
                #expect(response.status == .ok && String(buffer: response.body).contains("Posted</span> by <span class=\"by\">seed</span>"))
            }
        }
    }

    @Test("a search the board cannot make says why beside the box, in the board's words (not the API's), on a 400 page: one that is not percent-encoded UTF-8, one without a word, too long, of too many words", arguments: [
        ("/?q=%FF", "The search in the address is not valid percent-encoded UTF-8."), ("/?q=%", "The search in the address is not valid percent-encoded UTF-8."),
        ("/?q=%22%22", "The search holds no word to search for (letters or digits)."),
        ("/?q=" + String(repeating: "a", count: 201), "The search is 201 characters long; a search takes at most 200."),
        ("/?q=a+b+c+d+e+f+g+h+i", "The search holds 9 words; a search takes at most 8."),
    ])
    func searchProblems(uri: String, message: String) async throws {
        try await withServer { client, _ in
            try await client.execute(uri: uri, method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .badRequest, "\(uri)")
                #expect(html.contains(#"<p class="error" id="search-error" role="alert">"#) && html.contains(message.replacingOccurrences(of: "\"", with: "&quot;")), "\(html)")
                #expect(html.contains(#"aria-invalid="true" aria-describedby="search-error""#))
                #expect(html.contains("No search was made.") && !html.contains("Nothing found"))
            }
        }
    }

    @Test("a search or a query parameter's name that joins markup to a neighbouring letter (U+0D4E before <, U+0301 after >) comes back on its page as text, not as a tag")
    func joinedMarkupInQuery() async throws {
        try await withServer { client, _ in
            // <meta http-equiv=refresh content=0;url=https://evil.example/ > with U+0D4E before it and U+0301 after.
            let meta = "%E0%B5%8E%3Cmeta%20http-equiv%3Drefresh%20content%3D0%3Burl%3Dhttps%3A//evil.example/%20%3E%CC%81"
            // (A page ignores a parameter it does not take; a form's post names it, on a page.)
            for (method, uri) in [(HTTPRequest.Method.get, "/?q=\(meta)"), (.post, "/sign-in?\(meta)=1")] {
                try await client.execute(uri: uri, method: method, headers: Self.form, body: method == .post ? body("token=x") : nil) { response in
                    let html = String(buffer: response.body)
                    #expect(response.headers[.contentType] == "text/html; charset=utf-8", "\(uri)")
                    // (A parameter's name is quoted as it came, percent-encoded.)
                    #expect(method == .post || html.contains("&lt;meta http-equiv=refresh"), "the text is on the page: \(uri)")
                    #expect(method == .get || (response.status == .badRequest && html.contains("Unknown query parameter")), "\(uri)")
                    #expect(!Array(html.utf8).contains(Array("<meta http-equiv=refresh".utf8)), "no tag: \(uri)")
                }
            }
        }
    }

    @Test("a past board's time moved by the reader's time zone out of the years 0000 to 9999 is a 400 page, and the server goes on")
    func pastBoardAtTheEdgeOfTime() async throws {
        try await withServer { client, _ in
            let auditor: HTTPFields = [.cookie: "\(WebSession.cookieName)=audrey-secret"]
            for query in ["at=0000-01-01T00:00&tz=-1", "at=9999-12-31T23:59&tz=1"] {
                try await client.execute(uri: "/?\(query)", method: .get, headers: auditor) { response in
                    #expect(response.status == .badRequest, "\(query)")
                    #expect(String(buffer: response.body).contains("falls outside the years 0000 to 9999"), "\(query)")
                }
            }
            // A time zone no place has is named as such, not as a bad time.
            try await client.execute(uri: "/?at=2026-12-01T05:22&tz=99999", method: .get, headers: auditor) { response in
                #expect(response.status == .badRequest)
                let html = String(buffer: response.body)
                #expect(html.contains("must be a time zone") && html.contains("not 99999") && !html.contains("must be a date and time"), "\(html)")
            }
            try await client.execute(uri: "/?at=0000-01-01T00:00&tz=1", method: .get, headers: auditor) { #expect($0.status == .ok) }
            try await client.execute(uri: "/", method: .get) { #expect($0.status == .ok) }
        }
    }

    @Test("an admin erases from a page, with a reason it must give; the form sent twice ends on the history, as once")
    func erase() async throws {
        try await withServer { client, store in
            try await client.execute(uri: "/a/3/erase", method: .post, headers: Self.post("ada-secret"), body: body("reason=+")) { response in
                #expect(response.status == .unprocessableContent && String(buffer: response.body).contains("The reason is required"))
            }
            try await client.execute(uri: "/a/3/erase", method: .post, headers: Self.post("alice-secret"), body: body("reason=gone")) { #expect($0.status == .forbidden) }
            // One never created: its 404, reason or not (not the form again).
            for reason in ["", "personal+data"] {
                try await client.execute(uri: "/a/99/erase", method: .post, headers: Self.post("ada-secret"), body: body("reason=\(reason)")) { response in
                    #expect(response.status == .notFound && String(buffer: response.body).contains("was never created"), "\(reason)")
                }
            }
            #expect(store.snapshot.erased.isEmpty)
            try await client.execute(uri: "/a/3/erase", method: .post, headers: Self.post("ada-secret"), body: body("reason=personal+data")) { response in
                #expect(response.status == .seeOther && response.headers[.location] == "/a/3/history")
            }
            #expect(store.snapshot.erased[3] != nil)
            let seq = store.snapshot.seq
            // The form sent again (a double click, a reload): done already, to the history again, nothing more written.
            try await client.execute(uri: "/a/3/erase", method: .post, headers: Self.post("ada-secret"), body: body("reason=personal+data")) { response in
                #expect(response.status == .seeOther && response.headers[.location] == "/a/3/history")
            }
            #expect(store.snapshot.seq == seq)
            try await client.execute(uri: "/a/3/history", method: .get, headers: [.cookie: "\(WebSession.cookieName)=ada-secret"]) { response in
                #expect(String(buffer: response.body).contains("Reason: personal data"))
            }
            // Its question is not asked again (a bookmark, Back): the history answers it.
            try await client.execute(uri: "/a/3/erase", method: .get, headers: [.cookie: "\(WebSession.cookieName)=ada-secret"]) { response in
                #expect(response.status == .seeOther && response.headers[.location] == "/a/3/history")
            }
            try await client.execute(uri: "/a/4/erase", method: .get, headers: [.cookie: "\(WebSession.cookieName)=ada-secret"]) { response in
                #expect(response.status == .ok && String(buffer: response.body).contains("Erase for good"), "an announcement not erased is still asked about")
            }
        }
    }

    @Test("assets are served by the path that names their bytes, kept for good; another is a 404")
    func assets() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: WebAssets.script.path, method: .get) { response in
                #expect(response.status == .ok && response.headers[.contentType] == "text/javascript; charset=utf-8")
                #expect(response.headers[.cacheControl] == "public, max-age=31536000, immutable")
                #expect(Array(buffer: response.body) == WebAssets.script.bytes)
            }
            try await client.execute(uri: "/assets/app.0000000000000000.js", method: .get) { #expect($0.status == .notFound) }
        }
    }

    @Test("a browser sent to a path nobody serves gets a page with the way back; an API client still gets the API's error")
    func unknownPath() async throws {
        let chromium = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
        try await withServer { client, _ in
            try await client.execute(uri: "/announcement", method: .get, headers: [.accept: chromium]) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                let html = String(buffer: response.body)
                #expect(html.contains("There is no page at /announcement") && html.contains("href=\"/\""), "\(html)")
                #expect(response.headers[.vary]?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.contains("Accept") == true, "the answer depends on Accept")
            }
            for accept in ["*/*", "application/json", "application/xml", "text/html;q=0.5, application/json"] {
                try await client.execute(uri: "/announcement", method: .get, headers: [.accept: accept]) { response in
                    #expect(response.status == .notFound)
                    #expect(response.headers[.contentType]?.hasPrefix("text/html") == false, "Accept: \(accept)")
                    #expect(String(buffer: response.body).contains("did you mean /announcements?"), "Accept: \(accept)")
                }
            }
            try await client.execute(uri: "/announcement", method: .post, headers: [.accept: chromium]) { response in
                #expect(response.status == .notFound && response.headers[.contentType]?.hasPrefix("text/html") == false, "a form's post is not a navigation to a page")
            }
        }
    }
}
