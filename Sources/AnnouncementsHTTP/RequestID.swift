/// The ids this server gives requests that bring none: a prefix drawn at random when the process
/// starts (so that ids of two runs, or two servers, differ) and a number unique in the process,
/// in hex: `5f3a9c-1b`.
///
/// Up to 67,108,863 requests a thread's slot (the number below 2³²), the id is at most 15 bytes,
/// which Swift keeps inside the `String` value itself: making one allocates nothing (a UUID's
/// string was 36 bytes, on the heap).
enum RequestID {
    /// Six hex digits, random per process.
    static let prefix: InlineDigits = InlineDigits(UInt64.random(in: 0..<0x100_0000), width: 6)
    /// Each thread's count of the ids it made, beside its slot's index (`ThreadSlots`): no core
    /// writes a counter that another core's requests write too.
    private static let counts = ThreadSlots<(slot: UInt64, count: UInt64)> { (UInt64($0), 0) }

    /// The next id: its thread's next count, times the number of slots, plus the slot (unique
    /// across slots; the first of each thread's ids are small numbers still).
    static func next() -> String {
        let slots = UInt64(counts.count)
        let number = counts.withCallersSlot { made in
            made.count += 1
            return made.count &* slots &+ made.slot
        }
        let digits = InlineDigits(number, width: 1)
        return String(unsafeUninitializedCapacity: prefix.count + 1 + digits.count) { buffer in
            var end = prefix.write(into: buffer, at: 0)
            buffer[end] = UInt8(ascii: "-")
            end = digits.write(into: buffer, at: end + 1)
            return end
        }
    }
}

/// The lowercase hex digits of a number, kept in a value (no allocation).
struct InlineDigits: Sendable {
    private var value: UInt64
    /// How many digits: at least `width`, zero-padded.
    let count: Int

    init(_ value: UInt64, width: Int) {
        self.value = value
        let significant = value == 0 ? 1 : (67 - value.leadingZeroBitCount) / 4
        count = max(width, significant)
    }

    /// Writes the digits at `start`; returns the index after them.
    func write(into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        var rest = value
        for index in stride(from: start + count - 1, through: start, by: -1) {
            let digit = UInt8(truncatingIfNeeded: rest & 0xF)
            buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            rest >>= 4
        }
        return start + count
    }
}
