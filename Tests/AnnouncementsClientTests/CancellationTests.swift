@testable import AnnouncementsClient
import Foundation
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Cancelling a request")
struct CancellationTests {
    @Test("a read cancelled while the server has not answered ends as a cancellation (unreachable, URLError.cancelled), not with the answer that comes later")
    func cancelledWhileWaiting() async throws {
        fakeHeldReads.withLock { $0 = 0 }
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url, timeout: testTimeout)
            let read = Task { try await client.announcement(id: 7) }
            for _ in 0..<1000 where fakeHeldReads.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(fakeHeldReads.withLock { $0 } == 1, "the read reached the server")
            read.cancel()
            await #expect { try await read.value } throws: { error in
                guard case .unreachable(_, let underlying) = error as? ClientError else { return false }
                return underlying.code == .cancelled
            }
            fakeHeldReads.withLock { $0 = 0 }
        }
    }

    @Test("a request made by a task already cancelled ends as a cancellation and leaves nothing in its session: the session can finish", .timeLimit(.minutes(3)))
    func cancelledBeforeStarting() async throws {
        let delegate = InvalidationWatch()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        let request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:9/never")))
        let outcome = Task { () -> URLError.Code? in
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                _ = try await CancellableDataTask.data(for: request, on: session)
                return nil
            } catch {
                return (error as? URLError)?.code
            }
        }
        #expect(await outcome.value == .cancelled)
        // A session invalidated this way waits for every task it holds to complete.
        session.finishTasksAndInvalidate()
        let deadline = ContinuousClock.now + .seconds(20)
        while !delegate.invalidated.withLock({ $0 }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(delegate.invalidated.withLock { $0 }, "the session still held the request's data task")
    }

    // The limit catches the deadlock only: beside every other suite in one process on 2 cores
    // the 300 rounds took 92 s, and 125 to 178 s beside two busy loops.
    @Test(
        "reads cancelled at every moment of their course (before sending, in flight, as the answer arrives) each end, answered or cancelled: none hangs (the lock-order deadlock of swift-corelibs-foundation's data(for:))",
        .timeLimit(.minutes(6))
    )
    func cancelledAtAnyMoment() async throws {
        try await withServer { url in
            let client = AnnouncementsClient(baseURL: url, timeout: testTimeout)
            var answered = 0, cancelled = 0
            for round in 0..<300 {
                let read = Task { try await client.announcement(id: 1) }
                // From at once to about a request's round trip.
                if round % 3 != 0 { try await Task.sleep(for: .microseconds(round % 97 * 20)) }
                read.cancel()
                do {
                    #expect(try await read.value.id == 1)
                    answered += 1
                } catch let ClientError.unreachable(_, underlying) where underlying.code == .cancelled {
                    cancelled += 1
                }
            }
            #expect(answered + cancelled == 300)
            #expect(cancelled > 0, "some reads were cancelled before their answer")
        }
    }

    @Test("a request's state: cancelled before its data task starts, the task is not started and its end answers nothing; cancelled while it runs, that task is cancelled once and its end answers; after its end, nothing is cancelled")
    func transitions() {
        let task = URLSession.shared.dataTask(with: URLRequest(url: URL(fileURLWithPath: "/")))
        var state = CancellableDataTask.State.starting
        var cancelledTask = state.cancel()
        var started = state.start(task)
        #expect(cancelledTask == nil && !started, "not started once cancelled")
        cancelledTask = state.cancel()
        #expect(cancelledTask == nil)
        var owed = state.finish()
        #expect(!owed, "answered when it was not started: its data task's end answers nothing")

        state = .starting
        started = state.start(task)
        cancelledTask = state.cancel()
        #expect(started && cancelledTask === task)
        cancelledTask = state.cancel()
        #expect(cancelledTask == nil, "cancelled once")

        owed = state.finish()
        #expect(owed, "a data task cancelled as it ran answers at its end")

        state = .starting
        started = state.start(task)
        owed = state.finish()
        #expect(owed, "a data task that ran answers at its end")
        cancelledTask = state.cancel()
        #expect(started && cancelledTask == nil, "nothing to cancel after its end")
        started = state.start(task)
        #expect(!started)
    }
}

/// Says when its session became invalid: once every task it made has completed.
final class InvalidationWatch: NSObject, URLSessionDelegate, Sendable {
    let invalidated = Mutex(false)

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        invalidated.withLock { $0 = true }
    }
}
