import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
@testable import AnnouncementsHTTP

/// `Log-Seq` on every write's answer, and `Min-Seq` on a server alone on its log (the several-node
/// case, where a node waits for the seq, is in MultiNodeTests).
@Suite struct ReadYourWritesAPITests {
    @Test("every write answers Log-Seq: the seq its answer reflects")
    func logSeq() async throws {
        try await withServer { client, store in
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"New"}"#)) { response in
                #expect(response.headers[.logSeq] == "7")
            }
            try await client.execute(uri: "/announcements/7", method: .patch, headers: alice, body: body(#"{"title":"Changed"}"#)) { response in
                #expect(response.headers[.logSeq] == "8")
            }
            // An edit that changes nothing appends nothing: its answer reflects seq 8 still.
            try await client.execute(uri: "/announcements/7", method: .patch, headers: alice, body: body(#"{"title":"Changed"}"#)) { response in
                #expect(response.headers[.logSeq] == "8")
            }
            try await client.execute(uri: "/announcements/7", method: .delete, headers: alice) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.logSeq] == "9")
            }
            #expect(store.snapshot.seq == 9)
        }
    }

    @Test("Min-Seq up to the last seq is answered as usual; beyond it a server alone answers 409 (not a 503 after waiting); a bad one is a 400")
    func minSeq() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/announcements/1", method: .get, headers: [.minSeq: "6"]) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/announcements", method: .get, headers: [.minSeq: "7"]) { response in
                #expect(response.status == .conflict)
                #expect(response.object["lastSeq"] as? Int == 6)
                #expect(response.object["minSeq"] as? Int == 7)
                #expect((response.object["message"] as? String)?.contains("no other server appends to it") == true)
            }
            for bad in ["-1", "seven", "99999999999999999999"] {
                try await client.execute(uri: "/announcements", method: .get, headers: [.minSeq: bad]) { response in
                    #expect(response.status == .badRequest, "\(bad)")
                    #expect((response.object["message"] as? String)?.contains("Min-Seq") == true)
                }
            }
        }
    }

    // The check comes before Min-Seq is looked at: on this log (a server alone) Min-Seq beyond the
    // last seq would otherwise be a 409 naming `lastSeq`; on a shared one, a wait. (How long the
    // answer takes is not asserted: timings belong in benchmarks.)
    @Test("under reads: token, Min-Seq from a caller who may not read is the read's 401, before Min-Seq is looked at, and names no seq; a reader's is answered as usual")
    func minSeqNeedsAReader() async throws {
        try await withServer(reads: .token) { client, _ in
            let strangers: [(headers: HTTPFields, challenge: String)] = [
                ([.minSeq: "1000000"], "Bearer"), ([.minSeq: "1000000", .authorization: "Bearer not-a-token"], #"Bearer error="invalid_token""#),
            ]
            for (headers, challenge) in strangers {
                let response = try await client.execute(uri: "/announcements", method: .get, headers: headers)
                #expect(response.status == .unauthorized, "\(headers)")
                #expect(response.headers[.wwwAuthenticate] == challenge, "\(headers)")
                #expect(!response.object.keys.contains("lastSeq") && !response.object.keys.contains("minSeq"), "nothing about the log to a caller who may not read it")
            }
            var reader = auditor
            reader[.minSeq] = "1000000"
            try await client.execute(uri: "/announcements", method: .get, headers: reader) { response in
                #expect(response.status == .conflict)
                #expect(response.object["lastSeq"] as? Int == 6)
            }
        }
    }

    // Each read looks at Min-Seq once it has let the caller in: a caller it refuses gets the
    // refusal (not a 409 naming the log's seqs; on a shared log, not a wait first). The requests
    // that do not read the state ignore it.
    @Test("Min-Seq is looked at after the route's own check: history, a past state and a write without the right token are refused at once; writes, /health, /openapi.yaml and pages ignore it")
    func minSeqAfterTheRoutesCheck() async throws {
        try await withServer { client, store in
            let beyond: HTTPFields = [.minSeq: "1000000"]
            for uri in ["/announcements/1/history", "/announcements?asOf=3", "/v2/announcements/1?asOf=3"] {
                try await client.execute(uri: uri, method: .get, headers: beyond) { response in
                    #expect(response.status == .unauthorized, "\(uri)")
                    #expect(!response.object.keys.contains("lastSeq"), "\(uri)")
                }
            }
            // A reader's past state is still an auditor's: 403, not the seq.
            var reader = alice
            reader[.minSeq] = "1000000"
            try await client.execute(uri: "/announcements/1?asOf=3", method: .get, headers: reader) { #expect($0.status == .forbidden) }
            // An auditor gets the 409, on each read of the state.
            var audit = auditor
            audit[.minSeq] = "1000000"
            for uri in ["/announcements/1/history", "/announcements?asOf=3", "/events?after=0"] {
                try await client.execute(uri: uri, method: .get, headers: audit) { response in
                    #expect(response.status == .conflict, "\(uri)")
                    #expect(response.object["lastSeq"] as? Int == 6, "\(uri)")
                }
            }
            // A write with no token is a 401; with one, Min-Seq is not looked at (the write is
            // decided on the newest state).
            try await client.execute(uri: "/announcements", method: .post, headers: [.minSeq: "1000000", .contentType: "application/json"], body: body(#"{"title":"x"}"#)) {
                #expect($0.status == .unauthorized)
            }
            var writer = alice
            writer[.minSeq] = "1000000"
            try await client.execute(uri: "/announcements", method: .post, headers: writer, body: body(#"{"title":"Written"}"#)) { #expect($0.status == .created) }
            try await client.execute(uri: "/announcements/7", method: .delete, headers: writer) { #expect($0.status == .noContent) }
            #expect(store.lastSeq == 8)
            // /health and the web client's pages look at no bearer token and no seq.
            for uri in ["/health", "/", "/a/1"] {
                try await client.execute(uri: uri, method: .get, headers: [.minSeq: "1000000", .authorization: "Bearer nope"]) { #expect($0.status == .ok, "\(uri)") }
            }
        }
        try await withServer(reads: .token) { client, _ in
            try await client.execute(uri: "/health", method: .get, headers: [.minSeq: "1"]) { #expect($0.status == .ok) }
            try await client.execute(uri: "/openapi.yaml", method: .get, headers: [.minSeq: "seven"]) { #expect($0.status == .ok) }
        }
    }
}
