#!/usr/bin/env python3
"""What the threads of one server process share, per request (scripts/shared-bench.sh).

Reads two records of `perf script -F tid,event,trace,ip,sym --show-mmap-events`, each of calls
caught by a uprobe with their call stacks: `swift_retain` with the object it retains (`obj=`), beside
`swift_allocObject`'s returns (`ret=`: from then on, that address is a new object), and
`pthread_mutex_lock` with the mutex (`mutex=`) beside `Mutex`'s contended path (`mutex_slow`: where
it is reached names the contended lock); and `perf stat -x,` counts from the same run.
Prints per request: the retains (each an atomic read-modify-write of the object's count, except
on no object, a tagged value or a static object, which are not written), the futex calls (a lock
that was contended, or a thread that waits or wakes another), the contended acquisitions of
Swift's `Mutex`, the `pthread_mutex_lock` calls, the context switches. Then what is *hot and
shared*: the objects retained, and the mutexes locked, by one thread after another at least once
every ten requests (each such change moves the cache line between cores; calls made in a run on
one thread move it once). Each is named by where calls to it come from most often ("first reached
in"): the first frame of their stack in this project's code (`Announcements…`), or else the first
frame past the call. A request's own objects, made on one thread and handed to another, move too,
once or twice each; a shared one, such as an event loop or a cached response, moves on every
request for as long as it lives.

Usage: shared_objects.py RETAINS_TXT LOCKS_TXT STAT_CSV BINARY REQUESTS NAME [TOP]
(TOP: how many hot objects and mutexes to name, each kind; 6 unless given)
A record may miss calls the count has (perf drops samples it cannot keep up with): the shares
found in each record are scaled to its count. Standard library only.
"""
import collections
import re
import subprocess
import sys


def layout(binary):
    """The binary's LOAD segments: the page of the executable one's address (where perf's mapping of
    the binary starts, from the load base) and the highest address any reaches."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    text, end = None, 0
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOAD":
            end = max(end, int(fields[2], 16) + int(fields[5], 16))
            if "E" in fields[6:-1] and text is None:
                text = int(fields[2], 16) & ~0xFFF
    return text or 0, end


def demangle(symbols):
    """Swift's readable names for `symbols` (as they are when swift-demangle is missing)."""
    try:
        out = subprocess.run(["swift-demangle", "--simplified", "--compact"], input="\n".join(symbols),
                             capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return symbols
    return out if len(out) == len(symbols) else symbols


def calls(path):
    """The events of a `perf script` text, in order: (its header line, its call stack's frames
    without their offsets). A header is any line not starting with a tab (a call's, from its
    thread's id, right-aligned; a mapping's); its frames follow, each on a line starting with one."""
    header, frames = None, []
    with open(path, errors="replace") as lines:
        for line in lines:
            if line.startswith("\t"):
                if line.strip():
                    frames.append(re.sub(r"\+0x[0-9a-f]+$", "", line.strip().split(None, 1)[-1]))
                continue
            if header is not None:
                yield header, frames
            header, frames = (line if line.strip() else None), []
    if header is not None:
        yield header, frames


class Record:
    """One record's calls: by object (its address, and how many were made there before it), how
    many, on which threads, how often on another thread than the last, from where; where each
    object was made; where `Mutex` was found locked."""

    def __init__(self, path, field, binary):
        self.calls = 0
        self.base = None
        # How many objects were made at each address so far, and where each was made (none: before
        # the record began).
        self.generation = collections.Counter()
        self.made = {}
        self.counts = collections.Counter()
        self.moves = collections.Counter()
        self.last = {}
        self.threads = collections.defaultdict(set)
        self.sites = collections.defaultdict(collections.Counter)
        # Where Swift's Mutex was found locked (its contended path), by site.
        self.contended = collections.Counter()
        for header, stack in calls(path):
            if "PERF_RECORD_MMAP" in header:
                match = re.search(r"\[(0x[0-9a-f]+)\(", header)
                if match and header.rstrip().endswith(binary) and self.base is None:
                    self.base = int(match.group(1), 16)
            elif "mutex_slow" in header:
                self.contend(stack)
            elif field in header:
                self.add(header.split()[0], int(header.split(field)[1].split()[0]), stack)
            elif "ret=" in header:
                address = int(header.split("ret=")[1].split()[0])
                self.generation[address] += 1
                self.made[(address, self.generation[address])] = stack

    def contend(self, stack):
        """A contended `Mutex` reached through `stack`: counted by where this project's code took it."""
        if stack:
            self.contended[self.site([stack[0]] + [frame for frame in stack[1:] if "Synchronization" not in frame])] += 1

    def add(self, tid, address, stack):
        """A call on thread `tid` on the object at `address` (the last made there), through `stack`:
        on another thread than the last call on it, it moves the object's cache line between cores."""
        key = (address, self.generation[address])
        self.calls += 1
        self.counts[key] += 1
        if self.last.get(key, tid) != tid:
            self.moves[key] += 1
        self.last[key] = tid
        self.threads[key].add(tid)
        self.sites[key][self.site(stack)] += 1

    @staticmethod
    def site(stack):
        """Where a call stack reaches its call: its first frame in this project's code, or else its
        first frame past the call itself."""
        own = [frame for frame in stack if "Announcements" in frame]
        past = [frame for frame in stack[1:] if "pthread_mutex" not in frame]
        return own[0] if own else (past[0] if past else "?")

    def maker(self, key):
        """Where the object `key` was made, or None when it was made before the record began."""
        stack = self.made.get(key)
        return None if stack is None else self.site(stack)


def main():
    retains_path, locks_path, stat, binary, requests, name = sys.argv[1:7]
    top = int(sys.argv[7]) if len(sys.argv) > 7 else 6
    requests = int(requests)
    stats = {}
    for row in open(stat):
        fields = row.strip().split(",")
        if len(fields) > 3 and fields[0].replace(".", "").isdigit():
            stats[re.sub(r"_(ours|bare)$", "", fields[2].split(":")[-1])] = float(fields[0])
    retains = Record(retains_path, "obj=", binary)
    locks = Record(locks_path, "mutex=", binary)
    if retains.base is None:
        sys.exit(f"{retains_path}: no mapping of {binary}: its static objects cannot be told apart")
    text, extent = layout(binary)
    base = retains.base - text

    def written(key):
        """Whether a retain of `key`'s object writes a count: a heap object, not a static one or a tag."""
        address = key[0]
        return 0 < address < 1 << 47 and not base <= address < base + extent

    # Each recorded call stands for this many counted.
    per_retain = stats.get("retain", 0) / requests / max(retains.calls, 1)
    per_lock = stats.get("pthread_mutex_lock", 0) / requests / max(locks.calls, 1)
    writing = sum(count for address, count in retains.counts.items() if written(address))
    print(f"{name}: {requests} requests; per request: "
          f"{stats.get('retain', 0) / requests:.0f} swift_retain ({writing * per_retain:.0f} writing a count), "
          f"{stats.get('pthread_mutex_lock', 0) / requests:.2f} pthread_mutex_lock, "
          f"{stats.get('sys_enter_futex', 0) / requests:.2f} futex calls, "
          f"{stats.get('mutex_slow', 0) / requests:.3f} contended Mutex, "
          f"{stats.get('context-switches', 0) / requests:.2f} context switches")
    for record, scale, kind, include in ((retains, per_retain, "objects retained", written), (locks, per_lock, "mutexes locked", lambda _: True)):
        hot = [address for address, moves in record.moves.items() if include(address) and moves * scale >= 0.1]
        hot.sort(key=lambda address: -record.moves[address])
        if not hot:
            print(f"    no {kind} hot and shared")
            continue
        print(f"    {len(hot)} {kind} hot and shared: {sum(record.counts[a] for a in hot) * scale:.1f} calls a request, "
              f"{sum(record.moves[a] for a in hot) * scale:.1f} on another thread than the last:")
        shown = hot[:top]
        names = demangle([record.sites[address].most_common(1)[0][0] for address in shown])
        makers = [record.maker(address) for address in shown]
        for address, site, maker, readable in zip(shown, names, makers, demangle([maker or "" for maker in makers])):
            made = f"; made in {readable[:110]}" if maker is not None else "; made before the record"
            print(f"    {record.counts[address] * scale:6.2f}/req, {record.moves[address] * scale:5.2f} moving, "
                  f"{len(record.threads[address])} threads, first reached in {site[:110]}"
                  + (made if kind == "objects retained" else ""))

    if locks.contended:
        scale = stats.get("mutex_slow", 0) / requests / sum(locks.contended.values())
        sites = locks.contended.most_common(4)
        print("    contended Mutex, by where: " + "; ".join(
            f"{count * scale:.3f}/req in {site[:90]}" for (_, count), site in zip(sites, demangle([site for site, _ in sites]))))


if __name__ == "__main__":
    main()
