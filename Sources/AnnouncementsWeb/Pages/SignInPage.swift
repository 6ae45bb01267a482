/// The sign-in form at `/sign-in`: a token, kept by the browser in a cookie no page can read.
public struct SignInPage: WebPage {
    public static let template = "sign-in"

    public var chrome: PageChrome
    /// Where to go once signed in (a path on this site).
    public var next: String
    public var problem: String?

    public init(chrome: PageChrome, next: String, problem: String? = nil) {
        self.chrome = chrome
        self.next = next
        self.problem = problem
    }
}

/// A page that could not be shown, and why: a refusal (404, 403 naming the role), in words.
public struct ProblemPage: WebPage {
    public static let template = "problem"

    public var chrome: PageChrome
    public var heading: String
    public var message: String
    /// The sign-in page to come back here from, when signing in would help.
    public var signIn: String?
    /// The history of the announcement asked for, for an auditor when it is gone.
    public var history: String?

    public init(chrome: PageChrome, heading: String, message: String, signIn: String? = nil) {
        self.chrome = chrome
        self.heading = heading
        self.message = message
        self.signIn = signIn
    }
}
