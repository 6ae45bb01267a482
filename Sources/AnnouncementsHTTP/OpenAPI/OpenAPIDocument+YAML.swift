// The API's OpenAPI 3.1 document, compiled into the executable so that a binary copied alone
// serves it (GET /openapi.yaml). Edit it here; OpenAPITests checks it against the router's routes.

extension OpenAPIDocument {
    /// The document, as YAML.
    static let yaml = #"""
openapi: 3.1.0
info:
  title: Announcements
  version: "2.0"
  summary: An event-sourced announcement store for a company intranet.
  description: |
    Every change to an announcement is appended as one JSON line to an append-only log. Reads are
    served from in-memory read models: version 1.0 gives full announcements, 2.0 summaries, 3.0
    summaries and announcements with when each was created and last changed (`createdAt`,
    `updatedAt`), its `revision` (the seq of its last change) and a plain-text `excerpt` of its
    body. Choose the version with the `Accept-Version` header or a `/v1`, `/v2`, `/v3` path prefix;
    without either the server's default (2.0) applies. `q` on the list searches it, in every version. Every versioned response carries `API-Version` and
    `Vary: Accept-Version, Accept, Accept-Encoding`. JSON responses are `application/json;charset=UTF-8`;
    `Accept: application/xml` gets announcements as XML; a value XML 1.0 cannot carry (a control
    character that only a log written before the rules can hold) is a 406 there, never changed.

    Responses of 1 KB or more are compressed when `Accept-Encoding` allows gzip (preferred) or
    deflate (the zlib format), with `Content-Encoding` naming the coding; without
    `Accept-Encoding` they come as they are. A compressed body has an ETag of its own, the plain
    one with `-gzip` or `-deflate` inside the quotes; `If-None-Match` matches the tag of the
    representation the request selects, and `If-Match` takes any representation's tag. Event
    streams are never compressed.

    Each token in the server's config has a role: `author` (creates; edits and deletes what it
    created), `editor` (creates; edits and deletes anything), `auditor` (reads history, past
    states and full events; writes nothing) or `admin` (all of these). Send it as
    `Authorization: Bearer <token>`: writes need one whose role writes, history and `asOf` an
    auditor's or an admin's. Live announcements are public unless the server is configured with
    `reads: token`, where every read needs a token of any role (`/health` and this document stay
    open). A token sent to the announcements or the feed is checked there, read or write: an unknown one is a 401. A request
    outside its role is a 403 whose `needs` lists the roles that may. A 2xx answer to a write means
    its event is in the log and synced to disk. No error appends anything.
  license:
    name: Apache-2.0
servers:
  - url: http://127.0.0.1:8080
tags:
  - name: announcements
  - name: audit
  - name: service
paths:
  /health:
    get:
      tags: [service]
      operationId: health
      summary: The server answers, whether it can write, and the head of its log.
      description: |
        `head` is the last durable line as `SEQ:SHA256`, the same that `announcements verify`
        prints for the log: record it, and `announcements verify --expect-head SEQ:SHA256` later
        proves that the log was not cut back or rewritten up to that line.
      responses:
        "200":
          description: Up, and writes can succeed.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Health" }
        "400": { $ref: "#/components/responses/NoQuery" }
        "503":
          description: |
            Up, but writes cannot succeed (reads still work): the last write or sync failed (until
            the next one succeeds), or the log is unusable after a failed write that could not be
            undone (until the server restarts); with several nodes on one PostgreSQL log, also while
            writes wait for the writer role, and while the node cannot take in what the others
            appended. `status` is `degraded` and `reason` says why.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Health" }
  /metrics:
    get:
      tags: [service]
      operationId: metrics
      summary: The server's metrics, in Prometheus' text format.
      description: |
        Requests by route template, method and status class, with their durations; durable
        appends, lines per sync and sync durations; write failures; the log's seq and size; live
        announcements; event-stream subscribers; start-up time. Served unless `metrics.enabled` is
        false; with `metrics.token` set, only to a request that sends that token.
      security: [{}, { bearer: [] }]
      responses:
        "200":
          description: The metrics.
          content:
            text/plain:
              schema: { type: string }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /openapi.yaml:
    get:
      tags: [service]
      operationId: openapi
      summary: This document.
      description: "Revalidated by caches (`Cache-Control: no-cache`) with its ETag, which changes only with the server's version."
      parameters:
        - $ref: "#/components/parameters/AcceptEncoding"
        - $ref: "#/components/parameters/IfNoneMatch"
        - $ref: "#/components/parameters/ReadIfMatch"
      responses:
        "200":
          description: The OpenAPI document.
          headers: &codingHeaders
            Content-Encoding: { $ref: "#/components/headers/ContentEncoding" }
            Vary: { $ref: "#/components/headers/VaryEncoding" }
            ETag: { $ref: "#/components/headers/ETag" }
          content:
            application/yaml: {}
        "304":
          description: The If-None-Match ETag is current; no body.
          headers:
            ETag: { $ref: "#/components/headers/ETag" }
        "400": { $ref: "#/components/responses/NoQuery" }
        "412": { $ref: "#/components/responses/ReadPreconditionFailed" }
  /events:
    get:
      tags: [audit]
      operationId: events
      summary: The stored events after a seq, oldest first; in full for an auditor, else in public form.
      description: |
        With an auditor's or an admin's token, each event exactly as the log holds it (`Event`).
        For anyone else its public form (`PublicEvent`): `seq`, `type`, `id` and `at` only, no
        text, writer or key; an app following the feed re-reads the announcements it names. Both
        forms resume the same way. The answer varies by `Authorization`.

        With `Accept: text/event-stream`, a Server-Sent Events stream instead: every stored event
        after `after` (or after the `Last-Event-ID` header), then each new one as it is appended,
        as `id: <seq>`, `event: <type>`, `data: <the line or its public form>`; a comment line
        every `feed_heartbeat_seconds` (15 by default).

        A position (`after` or `Last-Event-ID`) beyond the log's last seq is a 409 naming that
        seq, in both forms, before any stream starts: the log was most likely restored from an
        older backup, and waiting would deliver the events that take those seqs next.

        At most half of `http.max_connections` streams are open at once: past that, a stream is
        a 503 with `Retry-After` (pages are still served).
      parameters:
        - { name: Last-Event-ID, in: header, description: "Resume after this seq (wins over `after`): what a reconnecting stream sends.", schema: { type: integer, format: int64, minimum: 0 } }
        - { name: after, in: query, description: Return events after this seq (default 0)., schema: { type: integer, format: int64, minimum: 0 } }
        - { name: limit, in: query, description: "At most this many (default 100, capped at 1000; fewer past 8 MiB of lines).", schema: { type: integer, format: int64, minimum: 1 } }
        - $ref: "#/components/parameters/AcceptEncoding"
        - $ref: "#/components/parameters/MinSeq"
      security: [{}, { bearer: [] }]
      responses:
        "200":
          description: The events (a page may come compressed; a stream never does).
          headers:
            Content-Encoding: { $ref: "#/components/headers/ContentEncoding" }
            Vary: { schema: { type: string }, description: "`Accept, Accept-Encoding, Authorization, Last-Event-ID`: a page or a stream, its coding, its form (the token), where it starts." }
            Log-Seq: { schema: { type: integer }, description: "A page: the log's last seq once the page was read. A page whose last event has it reached the end (wait before asking for the next); a page that ends before it was cut short (ask for the next at once)." }
          content:
            application/json:
              schema: { type: array, items: { oneOf: [{ $ref: "#/components/schemas/Event" }, { $ref: "#/components/schemas/PublicEvent" }] } }
            text/event-stream:
              schema: { type: string }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "406": { $ref: "#/components/responses/NotAcceptable" }
        "409": { $ref: "#/components/responses/BeyondLog" }
        "503":
          description: As many event streams are open as the server allows (half of `http.max_connections`), the log cannot be read back right now, or this node has not taken in the `Min-Seq` asked for within 5 s.
          headers: { Retry-After: { schema: { type: integer } } }
          content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } }
\#(announcementPaths)components:
  securitySchemes:
    bearer:
      type: http
      scheme: bearer
      description: A token from `tokens` in config.yaml; its role says what it may do, its name becomes the `by` of the events it makes.
  parameters:
    AcceptVersion:
      name: Accept-Version
      in: header
      description: The API version; without it (and without a path prefix) the default, 2.0.
      schema: { type: string, enum: ["1.0", "2.0", "3.0", "1", "2", "3"] }
    Id:
      name: id
      in: path
      required: true
      schema: { type: integer, minimum: 1 }
    IfNoneMatch:
      name: If-None-Match
      in: header
      description: |
        An ETag from an earlier response (or a list of them); a 304 with no body answers while it
        is current. It must be the tag of the representation this request selects: a compressed
        body's tag (`-gzip`) does not match a request without `Accept-Encoding`. `*` alone matches
        any; a list holding it among tags is a 400.
      schema: { type: string }
    AcceptEncoding:
      name: Accept-Encoding
      in: header
      description: |
        The content codings the client takes, with optional weights (`gzip`, `gzip, deflate;q=0.5`,
        `gzip;q=0` to refuse it). Bodies of 1 KB or more come compressed with gzip, or else deflate,
        when allowed; without this header, as they are.
      schema: { type: string }
    ReadIfMatch:
      name: If-Match
      in: header
      description: |
        ETags (or a list of them) the representation this request selects must have: a 412
        (an error naming its ETag) when none is (compared strongly: a weak `W/` tag never matches). `*` alone
        matches any; a list holding it among tags is a 400. Judged before If-None-Match.
      schema: { type: string }
    IfMatch:
      name: If-Match
      in: header
      description: The announcement's ETag (or a list of them); the write fails with 412 if none is current. `*` matches any current revision, alone; a list holding it among tags is a 400.
      schema: { type: string }
    WriteIfNoneMatch:
      name: If-None-Match
      in: header
      description: |
        ETags (or `*`) of what the write must not change: a 412 that writes nothing when one is a
        tag of the announcement's current revision (weakly compared: `W/` ignored; any
        representation's tag), or when it is `*` and the announcement exists. `*` alone; a list
        holding it among tags is a 400.
      schema: { type: string }
    IdempotencyKey:
      name: Idempotency-Key
      in: header
      description: |
        One key per logical write (1 to 255 visible ASCII characters). A repeat of the same request
        with the key appends nothing and gets the first answer; the key with another request is 422.
      schema: { type: string, minLength: 1, maxLength: 255, pattern: "^[!-~]+$" }
    Max:
      name: max
      in: query
      description: Page size (default 10, capped at 100; fewer past 8 MiB of the page, with `Link` to the rest).
      schema: { type: integer, format: int64, minimum: 0 }
    Offset:
      name: offset
      in: query
      schema: { type: integer, format: int64, minimum: 0 }
    Sort:
      name: sort
      in: query
      schema: { type: string, enum: [id, title] }
    Order:
      name: order
      in: query
      schema: { type: string, enum: [asc, desc] }
    Q:
      name: q
      in: query
      description: |
        Search: the live announcements holding every word of `q` in the title or the body's text
        (markup left out), case and accents aside, the last word also as the start of a word
        unless `q` ends with white space or that word is one letter (search as you type; a form's
        `+` is a space); those with every word in the title
        first, each group newest first. Paged by `max` and `offset`; not with `sort`, `order` or
        `asOf` (a 400). At most 200 characters and 8 words.
      schema: { type: string, minLength: 1, maxLength: 200, description: "At most 200 characters as a reader sees them (a letter and its combining marks count once)." }
    AsOf:
      name: asOf
      in: query
      description: An RFC 3339 time or a seq; the announcement (or the list) as it was then, counting the events at exactly that point. Needs an auditor's or an admin's token.
      schema:
        oneOf:
          - { type: string, format: date-time }
          - { type: string, pattern: "^[0-9]{1,18}$" }
    MinSeq:
      name: Min-Seq
      in: header
      description: |
        Read your writes through another node: the `Log-Seq` a write answered with. The answer
        reflects the log up to that seq at least; a node that has not taken it in yet waits for it
        up to 5 s, then answers 503. A server alone on its log answers 409 at once for a seq
        beyond its last (it will never come). Looked at once the caller is let in: a refusal
        comes at once. Only the reads of the announcements, their histories and the feed take it.
      schema: { type: integer, format: int64, minimum: 0 }
  headers:
    LogSeq: { schema: { type: integer }, description: "The seq of the log this write's answer reflects: send it as `Min-Seq` to read it from any node." }
    ETag: { schema: { type: string }, description: The representation's version. }
    APIVersion: { schema: { type: string, enum: ["1.0", "2.0", "3.0"] }, description: The version served. }
    Vary: { schema: { type: string }, description: "`Accept-Version, Accept, Accept-Encoding`: the same for every representation." }
    VaryEncoding: { schema: { type: string }, description: "`Accept-Encoding`: the body may come compressed." }
    ContentEncoding: { schema: { type: string, enum: [gzip, deflate] }, description: "The body's compression; absent when it is sent as it is (under 1 KB, or not asked for)." }
    TotalCount: { schema: { type: integer }, description: How many announcements there are in all. }
    Link: { schema: { type: string }, description: "`next` and `prev` pages." }
    Location: { schema: { type: string }, description: The new announcement's path. }
  schemas:
    Announcement:
      type: object
      required: [id, title, body]
      additionalProperties: false
      properties:
        id: { type: integer, minimum: 1 }
        title: { type: string }
        body: { type: [string, "null"], description: HTML; null when there is none. }
    Summary:
      type: object
      required: [id, title]
      additionalProperties: false
      properties:
        id: { type: integer, minimum: 1 }
        title: { type: string }
    SummaryV3:
      type: object
      description: A list item of version 3.0.
      required: [id, title, createdAt, updatedAt, revision, excerpt]
      additionalProperties: false
      properties:
        id: { type: integer, minimum: 1 }
        title: { type: string }
        createdAt: { type: string, format: date-time, description: When it was created (RFC 3339, UTC, milliseconds). }
        updatedAt: { type: string, format: date-time, description: When it last changed; its creation if it never did. }
        revision: { type: integer, minimum: 1, description: The seq of its last change in the log. }
        excerpt: { type: string, maxLength: 201, description: "The start of the body as plain text (markup out, references decoded, spaces collapsed), at most 200 characters and `…` after a cut; empty without a body." }
    AnnouncementV3:
      type: object
      description: An announcement in version 3.0.
      required: [id, title, body, createdAt, updatedAt, revision, excerpt]
      additionalProperties: false
      properties:
        id: { type: integer, minimum: 1 }
        title: { type: string }
        body: { type: [string, "null"], description: HTML; null when there is none. }
        createdAt: { type: string, format: date-time }
        updatedAt: { type: string, format: date-time }
        revision: { type: integer, minimum: 1 }
        excerpt: { type: string, maxLength: 201 }
    NewAnnouncement:
      type: object
      required: [title]
      additionalProperties: false
      properties:
        title: { type: string, minLength: 1, maxLength: 255, pattern: "^[^\\u0000-\\u001F\\u007F-\\u009F]*$", description: No control characters. }
        body: { type: [string, "null"], pattern: "^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$", description: "HTML; of the control characters, only tab, line feed and carriage return." }
    AnnouncementChange:
      type: object
      additionalProperties: false
      description: 'Only the fields given change; `"body": null` clears the body.'
      properties:
        title: { type: string, minLength: 1, maxLength: 255, pattern: "^[^\\u0000-\\u001F\\u007F-\\u009F]*$", description: No control characters. }
        body: { type: [string, "null"], pattern: "^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$", description: "HTML; of the control characters, only tab, line feed and carriage return." }
    Health:
      type: object
      required: [status, seq, head]
      properties:
        status: { type: string, enum: [ok, degraded] }
        reason: { type: string, description: "Why writes cannot succeed (only when `degraded`)." }
        seq: { type: integer, minimum: 0, description: The seq of the last durable event. }
        head:
          type: [string, "null"]
          pattern: "^[1-9][0-9]*:[0-9a-f]{64}$"
          description: "The last durable line as `SEQ:SHA256` (its seq and the SHA-256 of its bytes); null for an empty log."
    PublicEvent:
      type: object
      description: "What anyone who may read live announcements learns of an event: no text, writer or key."
      required: [seq, type, id, at]
      additionalProperties: false
      properties:
        seq: { type: integer, minimum: 1 }
        type: { type: string, enum: [created, edited, deleted, erased] }
        id: { type: integer, minimum: 1 }
        at: { type: string, format: date-time }
    Event:
      type: object
      description: One line of the log, exactly as stored (see events/README.md).
      required: [seq, type, id, at, by]
      properties:
        seq: { type: integer, minimum: 1 }
        type: { type: string, enum: [created, edited, deleted, erased] }
        id: { type: integer, minimum: 1 }
        at: { type: string, format: date-time }
        by: { type: string }
        salt: { type: string, pattern: "^[0-9a-f]{64}$", description: "From format 2: the salt of the data's digest." }
        sealed: { type: string, pattern: "^[0-9a-f]{64}$", description: "From format 2, once erased: the salted digest of the data that was here." }
        v: { type: integer, description: "The line's format: 3, or 2 in lines written before 1.18 (absent: 1)." }
        idempotency_key: { type: string, description: "Format 3: the writer's Idempotency-Key, when the request had one." }
        key: { type: string, description: "Formats 1 and 2: the writer's Idempotency-Key (renamed idempotency_key in format 3)." }
        data:
          type: object
          properties:
            title: { type: string }
            body: { type: [string, "null"] }
            reason: { type: string, description: "An erased event's: why." }
        prev: { type: string, pattern: "^[0-9a-f]{64}$" }
    Error:
      type: object
      description: "Every error, in JSON; to a request whose Accept prefers XML, the same members as elements of an <error> document."
      required: [error, message]
      properties:
        error: { type: integer, description: The HTTP status. }
        message: { type: string, description: What is wrong and how to fix it. }
        errors:
          type: array
          items:
            type: object
            required: [field, message]
            properties:
              field: { type: string }
              message: { type: string }
        supported:
          type: array
          items: { type: string }
        after: { type: integer, minimum: 0, description: "A 409 of /events: the position asked for." }
        lastSeq: { type: integer, minimum: 0, description: "A 409 of /events or of Min-Seq: the seq the log ends at." }
        minSeq: { type: integer, minimum: 0, description: "A 409 of Min-Seq: the seq asked for." }
        needs: { type: array, items: { type: string, enum: [author, editor, auditor, admin] }, description: "A 403: the roles that may do this." }
        role: { type: string, enum: [author, editor, auditor, admin], description: "A 403: the token's role." }
  responses:
    NoQuery: { description: "A query parameter: this takes none (the message names it).", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    BadRequest: { description: "A malformed request (named); with `WWW-Authenticate: Bearer error=\"invalid_request\"` (RFC 6750), a malformed `Authorization: Bearer` or two `Authorization` fields.", headers: { WWW-Authenticate: { schema: { type: string } } }, content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    Unauthorized:
      description: "No token where one is needed, or a token that is not a configured one (on the announcements' and the feed's routes, wherever it is sent). WWW-Authenticate says which, with RFC 6750's codes: `Bearer` where no bearer token came, `Bearer error=\"invalid_token\"` for one that is not configured (a malformed one is a 400)."
      headers: { WWW-Authenticate: { schema: { type: string, example: "Bearer error=\"invalid_token\"" } } }
      content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } }
    Forbidden: { description: "The token's role does not allow this (`needs` lists the roles that do, `role` is the token's, and WWW-Authenticate is `Bearer error=\"insufficient_scope\"`; an author changes only what it created), or no configured token has such a role.", headers: { WWW-Authenticate: { schema: { type: string } } }, content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    Gone: { description: "The announcement was erased: its texts and past states are gone. A read of it answers it, and so does a write that repeats (same Idempotency-Key, same writer, same action) a write of it, whatever its texts: nothing was written. (Another write naming it is a 404, as for a deleted one.)", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    NotFound: { description: No such announcement., content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    NotAcceptable: { description: "An unsupported Accept-Version or Accept (lists the supported versions), or XML asked for a value XML 1.0 cannot carry (the message names the announcement, field and character).", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    PreconditionFailed: { description: "A stale If-Match, or an If-None-Match that names the current revision (or is * for one that exists); nothing was written.", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    LengthRequired: { description: "The request has neither Content-Length nor Transfer-Encoding: chunked, so its body cannot be told from the connection's end; nothing was written.", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    TooLarge: { description: The request body is over the limit., content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    UnsupportedMedia: { description: The request body is not JSON., content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    Invalid: { description: "A rule is broken (a blank or long title, a long body, a control character (a body may hold tab, line feed and carriage return), a reused Idempotency-Key); `errors` names the fields.", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    Unavailable: { description: The log cannot be written (a full disk); reads still work., content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    Behind: { description: "This node has not taken in the `Min-Seq` asked for within 5 s (another node wrote it), or (with `q`) the search index is still being built after a start: try again.", headers: { Retry-After: { schema: { type: integer } } }, content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    BeyondMinSeq: { description: "`Min-Seq` is beyond the last seq of a log no other server appends to (named in `lastSeq`): the seq came from another log, or this one was restored from an older backup.", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    BeyondLog: { description: "The position (`after` or `Last-Event-ID`) is beyond the log's last seq, named in `lastSeq` (the log was restored from an older backup?): resume from `lastSeq`, or from 0. Likewise a `Min-Seq` beyond it on a server alone on its log (named in `minSeq`).", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    ReadPreconditionFailed: { description: "If-Match names no ETag of the representation this request selects; the message names its ETag.", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
    NotModified:
      description: The If-None-Match ETag is current; no body.
      headers:
        ETag: { $ref: "#/components/headers/ETag" }
        Vary: { $ref: "#/components/headers/Vary" }
"""# + oneResponses

    /// `responses` entries for one announcement, alike but for the JSON schema: `One` (either
    /// version's, as `Accept-Version` says), `OneV1` (under `/v1` and `/v2`) and `OneV3`.
    private static var oneResponses: String {
        [
            ("One", ##"{ anyOf: [{ $ref: "#/components/schemas/Announcement" }, { $ref: "#/components/schemas/AnnouncementV3" }] }"##),
            ("OneV1", ##"{ $ref: "#/components/schemas/Announcement" }"##),
            ("OneV3", ##"{ $ref: "#/components/schemas/AnnouncementV3" }"##),
        ].map { name, schema in
            #"""

                \#(name):
                  description: The announcement (compressed for a read that allows it; a write's answer never is).
                  headers:
                    ETag: { $ref: "#/components/headers/ETag" }
                    Log-Seq: { $ref: "#/components/headers/LogSeq" }
                    API-Version: { $ref: "#/components/headers/APIVersion" }
                    Vary: { $ref: "#/components/headers/Vary" }
                    Content-Encoding: { $ref: "#/components/headers/ContentEncoding" }
                  content:
                    application/json: { schema: \#(schema) }
                    application/xml: { schema: { type: string } }
                    text/xml: { schema: { type: string } }
            """#
        }.joined()
    }
}
