// The path items of the announcements' routes in the OpenAPI document, one for each path prefix
// (none, `/v1`, `/v2`, `/v3`), so that each operation has an `operationId` of its own: a generated client
// names its methods after them (OpenAPITests checks that every operation has one, unique, and tags).
// They stand in `paths` whole, never as a `$ref` to `components/pathItems`: OpenAPI 3.1 allows
// that, but generators that ignore it (openapi-python-client among them) left out every operation
// of the announcements.

extension OpenAPIDocument {
    /// The announcements' entries of `paths`: the collection, an item, its erasure and its history,
    /// then the same under `/v1`, `/v2` and `/v3`, with `V1`, `V2` and `V3` after their operations' ids.
    static let announcementPaths = ["", "V1", "V2", "V3"].map { collection($0) + item($0) + erase($0) + history($0) }.joined()

    /// The path prefix of the operations whose ids end with `suffix`: `/v1` for `V1`.
    private static func prefix(_ suffix: String) -> String {
        suffix.isEmpty ? "" : "/" + suffix.lowercased()
    }

    /// The response of one announcement under the prefix of `suffix`: v3's form under `/v3`, v1's
    /// under `/v1` and `/v2`, either without a prefix (as `Accept-Version` says).
    private static func one(_ suffix: String) -> String {
        switch suffix {
        case "": "One"
        case "V3": "OneV3"
        default: "OneV1"
        }
    }

    private static func collection(_ suffix: String) -> String {
        #"""
            \#(prefix(suffix))/announcements:
              post:
                tags: [announcements]
                operationId: createAnnouncement\#(suffix)
                summary: Post a new announcement.
                security: [{ bearer: [] }]
                parameters:
                  - $ref: "#/components/parameters/AcceptVersion"
                  - $ref: "#/components/parameters/IdempotencyKey"
                requestBody:
                  required: true
                  content:
                    application/json: { schema: { $ref: "#/components/schemas/NewAnnouncement" } }
                responses:
                  "201":
                    description: Created and synced to the log.
                    headers:
                      Location: { $ref: "#/components/headers/Location" }
                      ETag: { $ref: "#/components/headers/ETag" }
                      Log-Seq: { $ref: "#/components/headers/LogSeq" }
                    content:
                      application/json: { schema: \#(suffix == "V3" ? ##"{ $ref: "#/components/schemas/AnnouncementV3" }"## : suffix.isEmpty ? ##"{ anyOf: [{ $ref: "#/components/schemas/Announcement" }, { $ref: "#/components/schemas/AnnouncementV3" }] }"## : ##"{ $ref: "#/components/schemas/Announcement" }"##) }
                      application/xml: { schema: { type: string } }
                      text/xml: { schema: { type: string } }
                  "400": { $ref: "#/components/responses/BadRequest" }
                  "401": { $ref: "#/components/responses/Unauthorized" }
                  "403": { $ref: "#/components/responses/Forbidden" }
                  "406": { $ref: "#/components/responses/NotAcceptable" }
                  "410": { $ref: "#/components/responses/Gone" }
                  "411": { $ref: "#/components/responses/LengthRequired" }
                  "413": { $ref: "#/components/responses/TooLarge" }
                  "415": { $ref: "#/components/responses/UnsupportedMedia" }
                  "422": { $ref: "#/components/responses/Invalid" }
                  "503": { $ref: "#/components/responses/Unavailable" }

          """# + list(suffix)
    }

    /// The list: in the version `Accept-Version` names, or in the one of the path's prefix.
    private static func list(_ suffix: String) -> String {
        let (summary, versionParameter, schema) = switch suffix {
        case "V1":
            ("A page of full announcements (version 1.0, whatever Accept-Version says).", "", ##"{ type: array, items: { $ref: "#/components/schemas/Announcement" } }"##)
        case "V2":
            ("A page of summaries (version 2.0, whatever Accept-Version says).", "", ##"{ type: array, items: { $ref: "#/components/schemas/Summary" } }"##)
        case "V3":
            ("A page of summaries with their times, revisions and excerpts (version 3.0, whatever Accept-Version says).", "", ##"{ type: array, items: { $ref: "#/components/schemas/SummaryV3" } }"##)
        default:
            (
                #""A page of announcements: full ones for 1.0, summaries for 2.0, summaries with times, revisions and excerpts for 3.0.""#,
                ##"\##n        - $ref: "#/components/parameters/AcceptVersion""##,
                ##"{ anyOf: [{ type: array, items: { $ref: "#/components/schemas/Announcement" } }, { type: array, items: { $ref: "#/components/schemas/Summary" } }, { type: array, items: { $ref: "#/components/schemas/SummaryV3" } }] }"##
            )
        }
        return #"""
              get:
                tags: [announcements]
                operationId: list\#(suffix)
                summary: \#(summary)
                parameters:\#(versionParameter)
                  - $ref: "#/components/parameters/Max"
                  - $ref: "#/components/parameters/Offset"
                  - $ref: "#/components/parameters/Sort"
                  - $ref: "#/components/parameters/Order"
                  - $ref: "#/components/parameters/AsOf"
                  - $ref: "#/components/parameters/Q"
                  - $ref: "#/components/parameters/IfNoneMatch"
                  - $ref: "#/components/parameters/ReadIfMatch"
                  - $ref: "#/components/parameters/AcceptEncoding"
                  - $ref: "#/components/parameters/MinSeq"
                responses:
                  "200":
                    description: The page.
                    headers:
                      ETag: { $ref: "#/components/headers/ETag" }
                      API-Version: { $ref: "#/components/headers/APIVersion" }
                      Vary: { $ref: "#/components/headers/Vary" }
                      Content-Encoding: { $ref: "#/components/headers/ContentEncoding" }
                      X-Total-Count: { $ref: "#/components/headers/TotalCount" }
                      Link: { $ref: "#/components/headers/Link" }
                    content:
                      application/json: { schema: \#(schema) }
                      application/xml: { schema: { type: string } }
                      text/xml: { schema: { type: string } }
                  "304": { $ref: "#/components/responses/NotModified" }
                  "400": { $ref: "#/components/responses/BadRequest" }
                  "401": { $ref: "#/components/responses/Unauthorized" }
                  "403": { $ref: "#/components/responses/Forbidden" }
                  "406": { $ref: "#/components/responses/NotAcceptable" }
                  "412": { $ref: "#/components/responses/ReadPreconditionFailed" }
                  "409": { $ref: "#/components/responses/BeyondMinSeq" }
                  "503": { $ref: "#/components/responses/Behind" }

          """#
    }

    private static func item(_ suffix: String) -> String {
        #"""
            \#(prefix(suffix))/announcements/{id}:
              get:
                tags: [announcements]
                operationId: getAnnouncement\#(suffix)
                summary: One announcement, with its body, in both versions.
                parameters:
                  - $ref: "#/components/parameters/Id"
                  - $ref: "#/components/parameters/AcceptVersion"
                  - $ref: "#/components/parameters/AsOf"
                  - $ref: "#/components/parameters/IfNoneMatch"
                  - $ref: "#/components/parameters/ReadIfMatch"
                  - $ref: "#/components/parameters/AcceptEncoding"
                  - $ref: "#/components/parameters/MinSeq"
                responses:
                  "200": { $ref: "#/components/responses/\#(one(suffix))" }
                  "304": { $ref: "#/components/responses/NotModified" }
                  "400": { $ref: "#/components/responses/BadRequest" }
                  "401": { $ref: "#/components/responses/Unauthorized" }
                  "403": { $ref: "#/components/responses/Forbidden" }
                  "404": { $ref: "#/components/responses/NotFound" }
                  "406": { $ref: "#/components/responses/NotAcceptable" }
                  "412": { $ref: "#/components/responses/ReadPreconditionFailed" }
                  "409": { $ref: "#/components/responses/BeyondMinSeq" }
                  "410": { $ref: "#/components/responses/Gone" }
                  "503": { $ref: "#/components/responses/Behind" }
              put:
                tags: [announcements]
                operationId: replaceAnnouncement\#(suffix)
                summary: Replace the title and the body (no body clears it).
                security: [{ bearer: [] }]
                parameters:
                  - $ref: "#/components/parameters/Id"
                  - $ref: "#/components/parameters/AcceptVersion"
                  - $ref: "#/components/parameters/IfMatch"
                  - $ref: "#/components/parameters/WriteIfNoneMatch"
                  - $ref: "#/components/parameters/IdempotencyKey"
                requestBody:
                  required: true
                  content:
                    application/json: { schema: { $ref: "#/components/schemas/NewAnnouncement" } }
                responses:
                  "200": { $ref: "#/components/responses/\#(one(suffix))" }
                  "400": { $ref: "#/components/responses/BadRequest" }
                  "401": { $ref: "#/components/responses/Unauthorized" }
                  "403": { $ref: "#/components/responses/Forbidden" }
                  "404": { $ref: "#/components/responses/NotFound" }
                  "406": { $ref: "#/components/responses/NotAcceptable" }
                  "410": { $ref: "#/components/responses/Gone" }
                  "412": { $ref: "#/components/responses/PreconditionFailed" }
                  "411": { $ref: "#/components/responses/LengthRequired" }
                  "413": { $ref: "#/components/responses/TooLarge" }
                  "415": { $ref: "#/components/responses/UnsupportedMedia" }
                  "422": { $ref: "#/components/responses/Invalid" }
                  "503": { $ref: "#/components/responses/Unavailable" }
              patch:
                tags: [announcements]
                operationId: updateAnnouncement\#(suffix)
                summary: Change only the fields given.
                security: [{ bearer: [] }]
                parameters:
                  - $ref: "#/components/parameters/Id"
                  - $ref: "#/components/parameters/AcceptVersion"
                  - $ref: "#/components/parameters/IfMatch"
                  - $ref: "#/components/parameters/WriteIfNoneMatch"
                  - $ref: "#/components/parameters/IdempotencyKey"
                requestBody:
                  required: true
                  content:
                    application/json: { schema: { $ref: "#/components/schemas/AnnouncementChange" } }
                    application/merge-patch+json: { schema: { $ref: "#/components/schemas/AnnouncementChange" } }
                responses:
                  "200": { $ref: "#/components/responses/\#(one(suffix))" }
                  "400": { $ref: "#/components/responses/BadRequest" }
                  "401": { $ref: "#/components/responses/Unauthorized" }
                  "403": { $ref: "#/components/responses/Forbidden" }
                  "404": { $ref: "#/components/responses/NotFound" }
                  "406": { $ref: "#/components/responses/NotAcceptable" }
                  "410": { $ref: "#/components/responses/Gone" }
                  "412": { $ref: "#/components/responses/PreconditionFailed" }
                  "411": { $ref: "#/components/responses/LengthRequired" }
                  "413": { $ref: "#/components/responses/TooLarge" }
                  "415": { $ref: "#/components/responses/UnsupportedMedia" }
                  "422": { $ref: "#/components/responses/Invalid" }
                  "503": { $ref: "#/components/responses/Unavailable" }
              delete:
                tags: [announcements]
                operationId: deleteAnnouncement\#(suffix)
                summary: Delete an announcement (its id is never reused).
                security: [{ bearer: [] }]
                parameters:
                  - $ref: "#/components/parameters/Id"
                  - $ref: "#/components/parameters/AcceptVersion"
                  - $ref: "#/components/parameters/IfMatch"
                  - $ref: "#/components/parameters/WriteIfNoneMatch"
                  - $ref: "#/components/parameters/IdempotencyKey"
                responses:
                  "204":
                    description: Deleted and synced to the log.
                    headers:
                      Log-Seq: { $ref: "#/components/headers/LogSeq" }
                  "400": { $ref: "#/components/responses/BadRequest" }
                  "401": { $ref: "#/components/responses/Unauthorized" }
                  "403": { $ref: "#/components/responses/Forbidden" }
                  "404": { $ref: "#/components/responses/NotFound" }
                  "406": { $ref: "#/components/responses/NotAcceptable" }
                  "410": { $ref: "#/components/responses/Gone" }
                  "412": { $ref: "#/components/responses/PreconditionFailed" }
                  "422": { $ref: "#/components/responses/Invalid" }
                  "503": { $ref: "#/components/responses/Unavailable" }

          """#
    }

    private static func erase(_ suffix: String) -> String {
        #"""
            \#(prefix(suffix))/announcements/{id}/erase:
              post:
                tags: [audit]
                operationId: eraseAnnouncement\#(suffix)
                summary: Erase every title and body the announcement ever had (an admin's).
                description: |
                  Appends an `erased` event (who, when, `reason`), ends the announcement if it is live, and
                  overwrites each earlier line of it in the log with its sealed form: its skeleton (seq,
                  type, time, writer) and the salted digest of its data stay, and the hash chain still
                  proves every line (events/README.md). Its past states are gone (410). A log whose lines
                  of this announcement predate the format that can be erased is a 409 (run
                  `announcements upgrade` on the stopped log).
                security: [{ bearer: [] }]
                parameters:
                  - $ref: "#/components/parameters/Id"
                  - $ref: "#/components/parameters/AcceptVersion"
                requestBody:
                  required: true
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [reason]
                        additionalProperties: false
                        properties:
                          reason: { type: string, minLength: 1, maxLength: 1000, pattern: "^[^\\u0000-\\u001F\\u007F-\\u009F]*$", description: "Why: recorded in the erased event. No control characters." }
                responses:
                  "200":
                    description: Erased, and synced.
                    headers:
                      Log-Seq: { $ref: "#/components/headers/LogSeq" }
                    content:
                      application/json:
                        schema:
                          type: object
                          required: [id, seq, sealedLines]
                          properties:
                            id: { type: integer, minimum: 1 }
                            seq: { type: integer, minimum: 1, description: The erased event's seq. }
                            sealedLines: { type: array, items: { type: integer }, description: The lines overwritten by their sealed forms. }
                  "400": { $ref: "#/components/responses/BadRequest" }
                  "401": { $ref: "#/components/responses/Unauthorized" }
                  "403": { $ref: "#/components/responses/Forbidden" }
                  "404": { $ref: "#/components/responses/NotFound" }
                  "406": { $ref: "#/components/responses/NotAcceptable" }
                  "409": { description: "The announcement has lines in the log's first format: run `announcements upgrade` on the stopped log.", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } }, application/xml: { schema: { type: string } }, text/xml: { schema: { type: string } } } }
                  "410": { $ref: "#/components/responses/Gone" }
                  "411": { $ref: "#/components/responses/LengthRequired" }
                  "413": { $ref: "#/components/responses/TooLarge" }
                  "415": { $ref: "#/components/responses/UnsupportedMedia" }
                  "422": { $ref: "#/components/responses/Invalid" }
                  "503": { $ref: "#/components/responses/Unavailable" }

          """#
    }

    private static func history(_ suffix: String) -> String {
        #"""
            \#(prefix(suffix))/announcements/{id}/history:
              get:
                tags: [audit]
                operationId: getHistory\#(suffix)
                summary: Every event of the announcement, oldest first, also after it was deleted.
                description: It holds past states, so it needs an auditor's or an admin's token.
                security: [{ bearer: [] }]
                parameters:
                  - $ref: "#/components/parameters/Id"
                  - $ref: "#/components/parameters/AcceptVersion"
                  - $ref: "#/components/parameters/IfNoneMatch"
                  - $ref: "#/components/parameters/ReadIfMatch"
                  - $ref: "#/components/parameters/AcceptEncoding"
                  - $ref: "#/components/parameters/MinSeq"
                responses:
                  "200":
                    description: The events, exactly as stored.
                    headers:
                      ETag: { $ref: "#/components/headers/ETag" }
                      API-Version: { $ref: "#/components/headers/APIVersion" }
                      Vary: { $ref: "#/components/headers/Vary" }
                      Content-Encoding: { $ref: "#/components/headers/ContentEncoding" }
                    content:
                      application/json: { schema: { type: array, items: { $ref: "#/components/schemas/Event" } } }
                  "304": { $ref: "#/components/responses/NotModified" }
                  "400": { $ref: "#/components/responses/BadRequest" }
                  "401": { $ref: "#/components/responses/Unauthorized" }
                  "403": { $ref: "#/components/responses/Forbidden" }
                  "404": { $ref: "#/components/responses/NotFound" }
                  "406": { $ref: "#/components/responses/NotAcceptable" }
                  "412": { $ref: "#/components/responses/ReadPreconditionFailed" }
                  "409": { $ref: "#/components/responses/BeyondMinSeq" }
                  "503": { description: "The log cannot be read back right now, or this node has not taken in the `Min-Seq` asked for within 5 s.", headers: { Retry-After: { schema: { type: integer } } }, content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }

          """#
    }
}
