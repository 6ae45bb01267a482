"""A client nobody here wrote against a live server: httpx and httpx-sse (PyPI), following only
docs/http-api.md. The original acceptance tests, a write with If-Match, a resume of the event stream with
Last-Event-ID, and XML reads (and an XML error) negotiated by quality values.

Usage: python3 scripts/generic_client.py BASE_URL   (an editor's token in $TOKEN)
Exit status 0 when every check holds; each failure is printed with what was seen.
"""

import os
import sys
import time
import traceback
import xml.etree.ElementTree as ET

import httpx
from httpx_sse import connect_sse

JSON = "application/json;charset=UTF-8"
failures = []


def check(condition, what, seen=None):
    print(("ok    " if condition else "FAIL  ") + what + ("" if condition or seen is None else f": {seen!r}"))
    if not condition:
        failures.append(what)


def acceptance(client):
    """The original backend's acceptance tests (docs/http-api.md: "Versions"), on a non-empty list."""
    for version in ("1.0", "2.0"):
        r = client.get("/announcements/", headers={"Accept-Version": version})
        items = r.json() if r.status_code == 200 else []
        check(r.status_code == 200 and r.headers["content-type"] == JSON, f"GET /announcements/ v{version}: 200, {JSON}", (r.status_code, r.headers.get("content-type")))
        check(len(items) > 0 and all(item.get("id") and item.get("title") for item in items), f"v{version}: a non-empty list, each with id and title", items)
        if version == "1.0":
            check(all(item.get("body") for item in items), "v1.0: each item has a body", items)
        else:
            check(all("body" not in item for item in items), "v2.0: no item has a body", items)
        r = client.get("/announcements/2", headers={"Accept-Version": version})
        check(r.status_code == 200 and r.headers["content-type"] == JSON and {"id", "title", "body"} <= set(r.json()),
              f"GET /announcements/2 v{version}: 200 with id, title and body", (r.status_code, r.text[:200]))


def conditional_write(client, auth):
    """Read an ETag, write with it (If-Match), and see a stale one refused with nothing written."""
    r = client.get("/announcements/2", headers={"Accept-Version": "1.0"})
    etag = r.headers.get("etag")
    check(etag is not None, "GET /announcements/2 has an ETag", dict(r.headers))
    r = client.patch("/announcements/2", json={"title": "Renamed by httpx"}, headers={**auth, "If-Match": etag})
    check(r.status_code == 200 and r.json().get("title") == "Renamed by httpx", "PATCH with If-Match: 200 and the new title", (r.status_code, r.text))
    r = client.patch("/announcements/2", json={"title": "Lost update"}, headers={**auth, "If-Match": etag})
    check(r.status_code == 412 and r.json().get("error") == 412, "PATCH with the stale ETag: 412", (r.status_code, r.text))
    r = client.get("/announcements/2", headers={"Accept-Version": "1.0"})
    check(r.json().get("title") == "Renamed by httpx", "the stale write changed nothing", r.text)
    r = client.get("/announcements/2", headers={"Accept-Version": "1.0", "If-None-Match": r.headers.get("etag", "")})
    check(r.status_code == 304, "GET with If-None-Match of the current ETag: 304", r.status_code)


def events(source, deadline):
    """The stream's events until `deadline` (time.monotonic()); raises TimeoutError after it."""
    for event in source.iter_sse():
        yield event
        if time.monotonic() > deadline:
            raise TimeoutError("the stream did not deliver the events in time")


def stream_resume(client, auth):
    """Follow the event stream, disconnect, write, and resume with Last-Event-ID: the new event
    comes first, with nothing missed or repeated."""
    last_seq = max(event["seq"] for event in client.get("/events", params={"after": 0, "limit": 1000}).json())
    seen = []
    with connect_sse(client, "GET", "/events", params={"after": 0}, headers={"Accept": "text/event-stream"}) as source:
        check(source.response.headers["content-type"].startswith("text/event-stream"), "GET /events as a stream: text/event-stream", source.response.headers.get("content-type"))
        for event in events(source, time.monotonic() + 30):
            seen.append(int(event.id))
            if int(event.id) >= last_seq:
                break
    check(seen == list(range(1, last_seq + 1)), f"the stream sends events 1 to {last_seq} in order", seen)
    r = client.post("/announcements", json={"title": "Written while away"}, headers=auth)
    check(r.status_code == 201 and r.headers.get("location", "").startswith("/announcements/"), "POST: 201 with a Location", (r.status_code, dict(r.headers)))
    new_id = r.json().get("id")
    with connect_sse(client, "GET", "/events", headers={"Accept": "text/event-stream", "Last-Event-ID": str(seen[-1])}) as source:
        for event in events(source, time.monotonic() + 30):
            check(int(event.id) == last_seq + 1 and event.event == "created", "the resumed stream starts right after Last-Event-ID, with the create", (event.id, event.event))
            check(f'"id":{new_id},' in event.data, "its data names the new announcement", event.data)
            break
    r = client.get("/events", headers={"Last-Event-ID": str(last_seq + 5)})
    check(r.status_code == 409 and r.json().get("lastSeq") == last_seq + 1, "a Last-Event-ID beyond the log: 409 naming where it ends", (r.status_code, r.text))


def xml_reads(client):
    """XML by quality values: a client that prefers XML gets XML, errors included."""
    prefers_xml = {"Accept": "application/json;q=0.5, application/xml", "Accept-Version": "2.0"}
    r = client.get("/announcements", headers=prefers_xml)
    check(r.status_code == 200 and r.headers["content-type"].startswith("application/xml"), "Accept preferring XML: an XML list", (r.status_code, r.headers.get("content-type")))
    root = ET.fromstring(r.content)
    titles = [element.findtext("title") for element in root.findall("announcement")]
    check(root.tag == "announcements" and len(titles) > 0 and all(titles), "the XML list has announcements with titles", r.text[:200])
    r = client.get("/announcements/1", headers={"Accept": "text/xml"})
    check(r.headers["content-type"].startswith("text/xml") and ET.fromstring(r.content).findtext("id") == "1", "Accept: text/xml is answered as text/xml", (r.headers.get("content-type"), r.text[:200]))
    r = client.get("/announcements/999", headers=prefers_xml)
    error = ET.fromstring(r.content) if r.headers.get("content-type", "").startswith("application/xml") else None
    check(r.status_code == 404 and error is not None and error.findtext("error") == "404" and error.findtext("message"),
          "a 404 to a client preferring XML is an XML error with a message", (r.status_code, r.text))


def main():
    base = sys.argv[1]
    auth = {"Authorization": f"Bearer {os.environ['TOKEN']}"}
    # A read may wait up to 12 s between two bytes (the stream's heartbeat is 15 s: a stream that
    # stops sending events fails on it rather than hanging); connecting and sending, up to 60 s,
    # for a debug server on a busy machine.
    with httpx.Client(base_url=base, timeout=httpx.Timeout(60.0, read=12.0)) as client:
        parts = [
            ("the acceptance tests", lambda: acceptance(client)),
            ("the conditional write", lambda: conditional_write(client, auth)),
            ("the stream and its resume", lambda: stream_resume(client, auth)),
            ("the XML reads", lambda: xml_reads(client)),
        ]
        for name, part in parts:
            try:
                part()
            except Exception:
                check(False, f"{name} ran to their end", traceback.format_exc())
    print(f"{len(failures)} of the checks failed" if failures else "every check held")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
