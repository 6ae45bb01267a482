#!/usr/bin/env python3
"""The replay's baseline in Python: the same fold of the same log with orjson, for `make bench`.

Reads the log (events/README.md: one JSON object per line) and folds it into a dict of the live
announcements, as the store's replay does: `created` puts {title, body} under its id, `edited`
replaces the fields its data holds (`"body": null` clears the body), `deleted` removes the id.
Prints the time and rate of the fold (reading and parsing included, like the store's replay), the
live announcements, and the UTF-8 size of their titles and bodies (the live text, counted after
the timing), on one line:

    python orjson fold: 1000000 events in 3.215 s, 311042 events/s, 500083 live, 612 MB of live text

Exits 3 when orjson is not installed (the bench then says so and skips the comparison), 1 with
the line number on a line that is not an event.
"""

import sys
import time

try:
    import orjson
except ImportError:
    print("orjson is not installed: python3 -m pip install orjson", file=sys.stderr)
    sys.exit(3)


def fold(path):
    """The live announcements, id -> [title, body], and the number of events."""
    live = {}
    events = 0
    loads = orjson.loads
    with open(path, "rb") as log:
        for number, line in enumerate(log, 1):
            if not line.endswith(b"\n"):
                break  # a torn last line, which readers ignore (events/README.md)
            try:
                event = loads(line)
                kind = event["type"]
                if kind == "created":
                    data = event["data"]
                    live[event["id"]] = [data["title"], data.get("body")]
                elif kind == "edited":
                    data = event["data"]
                    announcement = live[event["id"]]
                    if "title" in data:
                        announcement[0] = data["title"]
                    if "body" in data:
                        announcement[1] = data["body"]
                elif kind == "deleted":
                    del live[event["id"]]
                else:
                    raise ValueError(f"unknown type {kind!r}")
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
                sys.exit(f"{path}:{number}: not an event this fold understands: {error!r}")
            events += 1
    return live, events


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: replay-fold.py LOG")
    path = sys.argv[1]
    start = time.perf_counter()
    try:
        live, events = fold(path)
    except OSError as error:
        sys.exit(f"{path}: cannot read the log: {error.strerror}")
    seconds = time.perf_counter() - start
    text = sum(len(title.encode()) + (len(body.encode()) if body else 0) for title, body in live.values())
    print(f"python orjson fold: {events} events in {seconds:.3f} s, {events / seconds:.0f} events/s, "
          f"{len(live)} live, {text / 1e6:.0f} MB of live text")


if __name__ == "__main__":
    main()
