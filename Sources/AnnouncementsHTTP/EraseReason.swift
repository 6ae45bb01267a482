import AnnouncementsDomain
import Foundation
import Hummingbird

/// The body of an erasure, `{"reason": "…"}`: why the texts go, recorded in the erased event.
enum EraseReason {
    static func read(_ request: Request, _ context: AnnouncementsRequestContext, maxBytes: Int) async throws -> String {
        let buffer = try await JSONBody.collect(request, maxBytes: maxBytes, what: #"the erasure's reason, {"reason": "…"},"#)
        if let problem = buffer.withUnsafeReadableBytes(JSONSyntax.problem) {
            throw APIError(.badRequest, "the request body is not valid JSON (\(problem)): send the reason as a JSON object like {\"reason\": \"…\"}")
        }
        let data = Data(buffer: buffer)
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw APIError(.badRequest, "the request body must be a JSON object like {\"reason\": \"…\"}")
            }
            object = parsed
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError(.badRequest, "the request body is not valid JSON")
        }
        if let repeated = data.withUnsafeBytes({ JSONFieldNames.firstRepeated(in: $0) }) {
            throw APIError(.badRequest, "field `\(repeated)` appears twice in the request body: send each field once")
        }
        if let unknown = object.keys.sorted().first(where: { $0 != "reason" }) {
            throw APIError(.badRequest, "unknown field `\(unknown)`: an erasure has a `reason`")
        }
        guard let value = object["reason"] else {
            throw APIError(.unprocessableContent, "an erasure needs a reason", fieldErrors: [FieldProblem(field: "reason", message: "is required")])
        }
        guard let reason = value as? String else { throw APIError(.badRequest, "field `reason` must be a string") }
        if let problem = ValidationRules.problem(reason: reason) {
            throw APIError(.unprocessableContent, "the reason is not valid: reason \(problem)", fieldErrors: [FieldProblem(field: "reason", message: problem)])
        }
        return reason
    }
}
