"""The web client in a real browser: Debian's headless Chromium through chromedriver and Selenium,
against a server of its own (started here, on a free port of 127.0.0.1, and restarted once on
the same port to see the pages reconnect). Every flow of the web client: read, search, open by
URL, back and forward, sign in and out, post with a preview, a 422 shown by its field, an edit
conflict, delete, live updates, history with its diffs, the board in the past, erase, a corpus of
XSS vectors (nothing may run or load from elsewhere), the pages' CSP, forged cross-site posts,
axe-core on every view, the keyboard, the reader's locale and time zone, and every view at 1280
and 360 pixels wide.

Usage: python3 scripts/browser_test.py BINARY [--screenshots DIR] [--measure]
  BINARY          the announcements executable
  --screenshots   only writes the README's pictures (board and announcement, desktop and phone)
  --measure       only measures the first view on a throttled network (BENCHMARKS.md)
Environment: CHROMIUM (default /usr/lib/chromium/chromium), CHROMEDRIVER (default /usr/bin/chromedriver).
Exit status 0 when every check holds; each failure is printed with what was seen.
"""

import http.server
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

TOKENS = {"admin": "admin-token-1", "editor": "editor-token-2", "author": "author-token-3", "auditor": "auditor-token-4"}
failures = []


def check(condition, what, seen=None):
    print(("ok    " if condition else "FAIL  ") + what + ("" if condition or seen is None else f": {seen!r}"[:600]))
    if not condition:
        failures.append(what)
    return condition


# MARK: - The server, and a second origin (where the XSS vectors would load from)


class Server:
    """The announcements server in a temporary folder, on 127.0.0.1."""

    def __init__(self, binary, config_file=None):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="announcements-browser-")
        if config_file:
            # Its seed and settings, with the log in the temporary folder and the tokens here.
            text = re.sub(r"(?m)^log:.*$", "log: log.jsonl", open(config_file).read())
            text = re.sub(r"(?ms)^tokens:\n(  .*?\n)+", "tokens:\n" + "".join(f"  {r}: {{token: {t}, role: {r}}}\n" for r, t in TOKENS.items()), text)
            open(os.path.join(self.dir, "config.yaml"), "w").write(text)
            self.process = None
            self.port = 0
            return
        with open(os.path.join(self.dir, "config.yaml"), "w") as config:
            config.write("log: log.jsonl\ntokens:\n")
            for role, token in TOKENS.items():
                config.write(f"  {role}: {{token: {token}, role: {role}}}\n")
            config.write("seed:\n")
            for n in range(1, 24):
                config.write(f"  - title: \"Seeded announcement {n:02d}\"\n    body: \"<p>Seeded text number {n}, about <em>lunch</em>.</p>\"\n")
        self.process = None
        self.port = 0

    def start(self):
        out = open(os.path.join(self.dir, "out"), "w")
        self.process = subprocess.Popen(
            [self.binary, "serve", "--config", os.path.join(self.dir, "config.yaml"), "--port", str(self.port)],
            stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "LOG_LEVEL": "warning"},
        )
        deadline = time.time() + 90
        while time.time() < deadline:
            text = open(os.path.join(self.dir, "out")).read()
            found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", text)
            if found:
                self.port = int(found.group(1))
                self.url = f"http://127.0.0.1:{self.port}"
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError("the server did not start: " + open(os.path.join(self.dir, "out")).read())

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=60)

    def api(self, method, path, body=None, token=None, headers=None):
        """(status, headers, parsed JSON or text) of an API request."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if body is not None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", "Bearer " + token)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read().decode()
                status, answer_headers = response.status, response.headers
        except urllib.error.HTTPError as error:
            text = error.read().decode()
            status, answer_headers = error.code, error.headers
        try:
            return status, answer_headers, json.loads(text)
        except ValueError:
            return status, answer_headers, text

    def create(self, title, body=None, token=TOKENS["editor"]):
        status, headers, created = self.api("POST", "/announcements", {"title": title, "body": body}, token, {"Accept-Version": "3.0"})
        assert status == 201, (status, created)
        return created


class Elsewhere:
    """Another origin: records every request that reaches it (an XSS vector's load or fetch),
    and serves a page that posts a form to the server (a forged cross-site request)."""

    def __init__(self):
        self.hits = []
        self.target = ""
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path.startswith("/forge"):
                    page = (f'<!doctype html><form id="f" method="post" action="{outer.target}/new">'
                            '<input name="title" value="Forged"><input name="body" value="forged"></form>'
                            '<script>document.getElementById("f").submit()</script>').encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
                    return
                outer.hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            do_POST = do_GET

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


# MARK: - The browser


def browser(width=1280, height=900, script=True):
    options = webdriver.ChromeOptions()
    if not script:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    options.binary_location = os.environ.get("CHROMIUM", "/usr/lib/chromium/chromium")
    for argument in ("--headless=new", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},{height}", "--lang=en-US"):
        options.add_argument(argument)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")  # Chromium's own sandbox needs a user namespace root lacks here
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    driver.set_page_load_timeout(60)
    set_width(driver, width, height)
    return driver


def set_width(driver, width, height=900):
    """The viewport at `width` CSS pixels (a phone's 360 is narrower than a headless window may be)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def wait(driver, condition, seconds=10):
    """condition's first true value within `seconds`, or None; a page that changes under it
    (a stale or missing element) is asked again."""
    def attempt(d):
        try:
            return condition(d)
        except WebDriverException:
            return False
    try:
        return WebDriverWait(driver, seconds, poll_frequency=0.05).until(attempt)
    except TimeoutException:
        return None


def texts(driver, selector):
    return [element.text for element in driver.find_elements(By.CSS_SELECTOR, selector)]


def sign_in(driver, server, role):
    driver.get(server.url + "/sign-in")
    driver.find_element(By.ID, "token").send_keys(TOKENS[role])
    driver.find_element(By.CSS_SELECTOR, "form.sign-in button").click()
    # The page the form leads to: the sign-in page itself already says who is signed in (the same
    # role, signing in again), and a step that went on from there raced the form's navigation (on
    # a busy machine the form's page could land after the step's own, and be the one checked).
    return wait(driver, lambda d: not d.current_url.startswith(server.url + "/sign-in")
                and f"Signed in as {role}" in d.find_element(By.CSS_SELECTOR, ".who").text)


def sign_out(driver):
    driver.find_element(By.CSS_SELECTOR, ".who button").click()
    wait(driver, lambda d: d.find_elements(By.LINK_TEXT, "Sign in"))


def frame_text(driver, frame):
    driver.switch_to.frame(frame)
    try:
        return driver.find_element(By.TAG_NAME, "body").text
    finally:
        driver.switch_to.default_content()


def board_ids(driver):
    return [int(href.rsplit("/", 1)[1]) for href in (a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "#board h2 a"))]


# MARK: - Checks


def reading(driver, server):
    raw = urllib.request.urlopen(server.url + "/").read().decode()
    check("Seeded announcement 23" in raw and "Seeded announcement 04" in raw, "the board's first answer holds the titles (before any script)")
    check(re.search(r"<script(?![^>]*\bsrc=)[^>]*>", raw) is None, "the board has no inline script")
    driver.get(server.url + "/")
    ids = board_ids(driver)
    check(len(ids) == 20 and ids == sorted(ids, reverse=True), "the board lists 20 announcements, newest first", ids)
    check(all(t for t in texts(driver, "#board time")), "each shows when it was posted")
    older = driver.find_element(By.CSS_SELECTOR, "a[rel=next]")
    older.click()
    wait(driver, lambda d: "offset=20" in d.current_url)
    check(board_ids(driver) == [3, 2, 1], "the next page holds the older ones", board_ids(driver))
    driver.back()
    wait(driver, lambda d: "offset" not in d.current_url)
    driver.find_element(By.LINK_TEXT, "Seeded announcement 07").click()
    wait(driver, lambda d: d.current_url.endswith("/a/7"))
    check(driver.find_element(By.TAG_NAME, "h1").text == "Seeded announcement 07", "a click opens the announcement")
    frame = driver.find_element(By.CSS_SELECTOR, "iframe.body")
    check("Seeded text number 7, about lunch." in frame_text(driver, frame), "its HTML body is rendered", frame_text(driver, frame))
    check(frame.get_attribute("sandbox") == "allow-same-origin allow-top-navigation-by-user-activation allow-popups allow-popups-to-escape-sandbox", "the body is in a frame sandboxed without scripts", frame.get_attribute("sandbox"))
    driver.back()
    check(wait(driver, lambda d: d.current_url.rstrip("/") == server.url and d.find_elements(By.ID, "board")), "back returns to the board", driver.current_url)
    driver.forward()
    check(wait(driver, lambda d: d.current_url.endswith("/a/7")), "forward opens it again", driver.current_url)
    driver.get(server.url + "/a/12")
    check(driver.find_element(By.TAG_NAME, "h1").text == "Seeded announcement 12", "an announcement opens by its URL")
    driver.get(server.url + "/a/999")
    check("does not exist" in driver.find_element(By.TAG_NAME, "main").text, "a missing one says so in words", driver.find_element(By.TAG_NAME, "main").text)
    driver.get(server.url + "/announcement")
    check("There is no page at /announcement" in driver.find_element(By.TAG_NAME, "main").text, "a path nobody serves is a page that says so, not the API's XML", driver.page_source[:300])
    driver.find_element(By.CSS_SELECTOR, "a[href='/']").click()
    check(wait(driver, lambda d: d.find_elements(By.ID, "board")), "and it leads back to the board", driver.current_url)


def searching(driver, server):
    server.create("Fire drill on Thursday", "<p>Meet at the <b>car park</b>.</p>")
    driver.get(server.url + "/")
    box = driver.find_element(By.ID, "q")
    box.send_keys("car pa")
    box.send_keys(Keys.ENTER)
    wait(driver, lambda d: "q=" in d.current_url)
    found = texts(driver, "#board h2")
    check(found == ["Fire drill on Thursday"], "search finds words of the body, the last one a prefix", found)
    box = driver.find_element(By.ID, "q")
    box.clear()
    box.send_keys("SEEDED announcement 2")
    box.send_keys(Keys.ENTER)
    wait(driver, lambda d: "SEEDED" in d.current_url and "SEEDED" in d.find_element(By.TAG_NAME, "h1").text)
    check("Seeded announcement 02" in texts(driver, "#board h2"), "search ignores case", texts(driver, "#board h2"))
    driver.get(server.url + "/?q=" + "+".join(["word"] * 9))
    check("at most 8" in driver.find_element(By.CSS_SELECTOR, ".error").text, "a search it cannot run says why")


def signing_in_and_out(driver, server):
    driver.get(server.url + "/sign-in")
    driver.find_element(By.ID, "token").send_keys("not-a-token")
    driver.find_element(By.CSS_SELECTOR, "form.sign-in button").click()
    check(wait(driver, lambda d: "not one this server knows" in d.find_element(By.ID, "token-error").text), "a wrong token is refused, in words")
    check(driver.switch_to.active_element.get_attribute("id") == "token", "the token field holds the focus again", driver.switch_to.active_element.get_attribute("id"))
    check(sign_in(driver, server, "editor"), "an editor signs in")
    cookie = driver.get_cookie("announcements_session") or {}
    check(cookie.get("httpOnly") is True and cookie.get("sameSite") == "Lax", "the token is kept in an HttpOnly, SameSite=Lax cookie", cookie)
    check(TOKENS["editor"] not in driver.execute_script("return document.cookie"), "page scripts cannot read the token")
    check(TOKENS["editor"] not in driver.current_url, "the token is in no URL")
    driver.get(server.url + "/a/1/edit")
    check(wait(driver, lambda d: d.find_elements(By.ID, "title")), "a signed-in page (the edit form)", driver.current_url)
    driver.get(server.url + "/")
    sign_out(driver)
    check(driver.get_cookie("announcements_session") is None, "signing out removes the cookie")
    driver.back()
    time.sleep(0.5)
    driver.back()
    check(wait(driver, lambda d: d.current_url.endswith("/sign-in?next=%2Fa%2F1%2Fedit")), "Back after signing out does not show the signed-in page again: it asks to sign in", driver.current_url)
    # Signed out from the signed-in page itself: Back must not show it from the browser's
    # back/forward cache (Chromium keeps even no-store pages there).
    driver.get(server.url + "/sign-in?next=%2Fa%2F1%2Fhistory")
    driver.find_element(By.ID, "token").send_keys(TOKENS["auditor"])
    driver.find_element(By.CSS_SELECTOR, "form.sign-in button").click()
    check(wait(driver, lambda d: d.current_url.endswith("/a/1/history") and "Signed in as auditor" in d.find_element(By.CSS_SELECTOR, ".who").text), "the history, signed in", driver.current_url)
    sign_out(driver)
    time.sleep(0.5)
    driver.back()
    check(wait(driver, lambda d: "/sign-in" in d.current_url and "Signed in as" not in d.find_element(By.TAG_NAME, "body").text),
          "Back after signing out from a signed-in page shows it no more (the back/forward cache's copy is fetched again)", driver.current_url)
    driver.get(server.url + "/new")
    check(wait(driver, lambda d: "/sign-in?next=" in d.current_url), "a page that needs a token sends to the sign-in page", driver.current_url)
    driver.find_element(By.ID, "token").send_keys(TOKENS["editor"])
    driver.find_element(By.CSS_SELECTOR, "form.sign-in button").click()
    check(wait(driver, lambda d: d.current_url.endswith("/new")), "and back to it once signed in", driver.current_url)


def posting(driver, server):
    """Signed in as the editor (signing_in_and_out)."""
    driver.get(server.url + "/new")
    driver.find_element(By.ID, "title").send_keys("Canteen closed on Friday")
    driver.find_element(By.ID, "body").send_keys("<p>The canteen is <strong>closed</strong> for cleaning.</p>")
    preview = driver.find_element(By.ID, "preview")
    check(wait(driver, lambda d: "The canteen is closed for cleaning." in frame_text(d, preview), 5), "the preview shows the text as readers will see it")
    driver.switch_to.frame(preview)
    bold = driver.find_elements(By.TAG_NAME, "strong")
    driver.switch_to.default_content()
    check(len(bold) == 1, "the preview renders the HTML")
    driver.find_element(By.CSS_SELECTOR, "form.editor button[type=submit]").click()
    check(wait(driver, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Canteen closed on Friday"), "posting opens the new announcement")
    # A title of spaces passes the browser's `required`; the server refuses it, by field.
    driver.get(server.url + "/new")
    driver.find_element(By.ID, "title").send_keys("   ")
    driver.find_element(By.ID, "body").send_keys("<p>kept</p>")
    driver.find_element(By.CSS_SELECTOR, "form.editor button[type=submit]").click()
    error = wait(driver, lambda d: d.find_elements(By.ID, "title-error"))
    check(error and "The title must not be blank" in error[0].text, "a 422 is shown by its field, in words", error and error[0].text)
    check(driver.find_element(By.ID, "title").get_attribute("aria-invalid") == "true", "the field is marked invalid")
    check(driver.switch_to.active_element.get_attribute("id") == "title", "and holds the focus (a screen reader reads it with its error)", driver.switch_to.active_element.get_attribute("id"))
    check(driver.find_element(By.ID, "body").get_attribute("value") == "<p>kept</p>", "what was typed is kept")


def editing(driver, server):
    """An edit conflict: someone else saves first; the poster sees what changed and chooses."""
    created = server.create("Parking rules", "<p>Park in rows A to C.</p>")
    id_ = created["id"]
    driver.get(server.url + f"/a/{id_}")
    driver.find_element(By.LINK_TEXT, "Edit").click()
    title = wait(driver, lambda d: d.find_element(By.ID, "title"))
    title.clear()
    title.send_keys("Parking rules (new)")
    server.api("PATCH", f"/announcements/{id_}", {"body": "<p>Park in rows D to F.</p>"}, TOKENS["admin"])
    driver.find_element(By.CSS_SELECTOR, "form.editor button[type=submit]").click()
    conflict = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".conflict"))
    check(bool(conflict), "an edit after someone else's is not saved: the conflict is shown")
    if conflict:
        deleted = [t.strip() for t in texts(driver, ".conflict p.diff del")]
        added = [t.strip() for t in texts(driver, ".conflict p.diff ins")]
        check(deleted == ["D", "F."] and added == ["(new)", "A", "C."], "it shows their change against the poster's, word by word", (deleted, added))
    _, _, now = server.api("GET", f"/announcements/{id_}", headers={"Accept-Version": "3.0"})
    check(now["title"] == "Parking rules" and "D to F" in now["body"], "nothing was overwritten", now)
    driver.find_element(By.CSS_SELECTOR, "form.editor button[type=submit]").click()
    check(wait(driver, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Parking rules (new)"), "choosing to save theirs over replaces it")
    return id_


def editing_and_deleting(driver, server):
    deleting(driver, server, editing(driver, server))


def frames_fit(driver, server):
    """A body's frame holds its whole text: at any width the window takes after the page opened
    (a turned phone, zoom), and in the editor's preview (whose padding and border come on top)."""
    body = "".join(f"<p>Paragraph {n} of a long announcement, long enough to wrap on a phone's narrow screen.</p>" for n in range(12))
    id_ = server.create("A long announcement", body)["id"]
    # The frame's inner height (without its padding and border) against its document's.
    room = ("const f = arguments[0], s = getComputedStyle(f);"
            "return [f.clientHeight - parseFloat(s.paddingTop) - parseFloat(s.paddingBottom),"
            " f.contentDocument.documentElement.getBoundingClientRect().height]")
    set_width(driver, 1280)
    driver.get(server.url + f"/a/{id_}")
    frame = driver.find_element(By.CSS_SELECTOR, "iframe.body")
    check(wait(driver, lambda d: (lambda r: r[1] > 0 and abs(r[0] - r[1]) <= 2)(d.execute_script(room, frame))), "a frame is as tall as its text", driver.execute_script(room, frame))
    set_width(driver, 360, 760)
    check(wait(driver, lambda d: (lambda r: r[1] > 0 and abs(r[0] - r[1]) <= 2)(d.execute_script(room, frame))), "and again once the window narrows under it (its text wraps anew: none is cut)", driver.execute_script(room, frame))
    set_width(driver, 1280)
    check(wait(driver, lambda d: (lambda r: r[1] > 0 and abs(r[0] - r[1]) <= 2)(d.execute_script(room, frame))), "and shrinks when it widens again", driver.execute_script(room, frame))
    driver.get(server.url + "/new")
    driver.find_element(By.ID, "body").send_keys(body)
    preview = driver.find_element(By.ID, "preview")
    check(wait(driver, lambda d: (lambda r: r[1] > 100 and r[0] >= r[1] - 1)(d.execute_script(room, preview))), "the preview holds its last line too (its padding and border on top of the text)", driver.execute_script(room, preview))


def without_script(server):
    """The pages work with the browser's scripts turned off: a body's frame (which the script would
    fit to its text) is tall enough to read in, not the browser's default 150 pixels; the search
    box's form searches; a link opens an announcement."""
    body = "".join(f"<p>Paragraph {n} of a long announcement read without scripts.</p>" for n in range(30))
    id_ = server.create("Read without scripts", body)["id"]
    driver = browser(script=False)
    try:
        driver.get(server.url + f"/a/{id_}")
        check(driver.execute_script("return matchMedia('(scripting: none)').matches"), "the page runs no script")
        frame = driver.find_element(By.CSS_SELECTOR, "iframe.body")
        heights = driver.execute_script("return [arguments[0].getBoundingClientRect().height, innerHeight]", frame)
        check(heights[0] >= 0.6 * heights[1], "a body's frame takes most of the window without the script", heights)
        driver.get(server.url + "/")
        box = driver.find_element(By.ID, "q")
        box.send_keys("scripts")
        box.send_keys(Keys.ENTER)
        check(wait(driver, lambda d: "/?q=scripts" in d.current_url and "Read without scripts" in texts(d, ".items h2")), "the search box's form searches", driver.current_url)
        driver.find_element(By.LINK_TEXT, "Read without scripts").click()
        check(wait(driver, lambda d: d.current_url.endswith(f"/a/{id_}")), "a title opens its announcement", driver.current_url)
    finally:
        driver.quit()


def timed(step, *arguments):
    start = time.time()
    step(*arguments)
    print(f"      ({step.__name__}: {time.time() - start:.1f} s)")


def deleting(driver, server, id_):
    driver.get(server.url + f"/a/{id_}")
    driver.find_element(By.LINK_TEXT, "Delete").click()
    check(wait(driver, lambda d: "Delete “Parking rules (new)”?" in d.find_element(By.TAG_NAME, "h1").text), "delete asks first")
    driver.find_element(By.CSS_SELECTOR, "button.danger").click()
    wait(driver, lambda d: d.find_elements(By.ID, "board"))
    check(id_ not in board_ids(driver), "once confirmed, it is gone from the board")
    status, _, _ = server.api("GET", f"/announcements/{id_}")
    check(status == 404, "and from the API", status)


def controls_follow_roles(driver, server):
    by_editor = server.create("Written by the editor", "<p>x</p>")["id"]
    by_author = server.create("Written by the author", "<p>y</p>", TOKENS["author"])["id"]
    sign_in(driver, server, "author")
    driver.get(server.url + f"/a/{by_editor}")
    check(not driver.find_elements(By.LINK_TEXT, "Edit") and not driver.find_elements(By.LINK_TEXT, "History"), "an author is offered no edit of another's announcement, nor history")
    driver.get(server.url + f"/a/{by_author}")
    check(driver.find_elements(By.LINK_TEXT, "Edit") and driver.find_elements(By.LINK_TEXT, "Delete"), "an author may edit and delete its own")
    driver.get(server.url + f"/a/{by_editor}/edit")
    check("created by another token" in driver.find_element(By.TAG_NAME, "main").text and "author" in driver.find_element(By.TAG_NAME, "main").text, "an author's edit of another's is a 403 naming the role", driver.find_element(By.TAG_NAME, "main").text)
    sign_in(driver, server, "auditor")
    driver.get(server.url + "/")
    check(not driver.find_elements(By.LINK_TEXT, "New announcement"), "an auditor is offered no new announcement")
    driver.get(server.url + f"/a/{by_editor}")
    check(driver.find_elements(By.LINK_TEXT, "History") and not driver.find_elements(By.LINK_TEXT, "Edit") and not driver.find_elements(By.LINK_TEXT, "Erase"), "an auditor is offered the history, no edit, no erase")
    driver.get(server.url + "/new")
    check("this needs role author, editor or admin" in driver.find_element(By.TAG_NAME, "main").text, "an auditor's /new is a 403 naming the roles", driver.find_element(By.TAG_NAME, "main").text)


def live_updates(driver, server):
    driver.get(server.url + "/")
    wait(driver, lambda d: "Live" in d.find_element(By.ID, "live-status").text)
    driver.execute_script("window.notReloaded = true")
    created = server.create("Live: posted just now", "<p>new</p>")
    check(wait(driver, lambda d: "Live: posted just now" in texts(d, "#board h2"), 2), "a new announcement appears within 2 s", driver.find_element(By.ID, "live-status").text)
    server.api("PATCH", f"/announcements/{created['id']}", {"title": "Live: edited just now"}, TOKENS["editor"])
    check(wait(driver, lambda d: "Live: edited just now" in texts(d, "#board h2"), 2), "an edit appears within 2 s")
    server.api("DELETE", f"/announcements/{created['id']}", token=TOKENS["editor"])
    check(wait(driver, lambda d: "Live: edited just now" not in texts(d, "#board h2"), 2), "a delete disappears within 2 s")
    check(driver.execute_script("return window.notReloaded === true"), "without a reload")
    other = server.create("Open while it changes", "<p>one</p>")
    driver.get(server.url + f"/a/{other['id']}")
    wait(driver, lambda d: "Live" in d.find_element(By.ID, "live-status").text)
    server.api("PATCH", f"/announcements/{other['id']}", {"body": "<p>two</p>"}, TOKENS["editor"])
    notice = wait(driver, lambda d: d.find_element(By.ID, "change-notice").is_displayed() and d.find_element(By.ID, "change-notice"), 2)
    check(notice and "was changed" in notice.text, "an open announcement says when it was changed", notice and notice.text)
    server.api("DELETE", f"/announcements/{other['id']}", token=TOKENS["editor"])
    check(wait(driver, lambda d: "was deleted" in d.find_element(By.ID, "change-notice").text, 2), "and when it was deleted")
    server.api("POST", f"/announcements/{other['id']}/erase", {"reason": "personal data"}, TOKENS["admin"])
    check(wait(driver, lambda d: "was erased" in d.find_element(By.ID, "change-notice").text, 2), "and when it was erased")
    shown = driver.find_element(By.TAG_NAME, "main").text
    check("Open while it changes" not in shown + driver.title and not driver.find_elements(By.CSS_SELECTOR, "iframe.body")
          and "Its texts have been erased" in shown, "and its texts leave the open page: title, text and the tab's name", shown)
    # A restart: the page reconnects by itself, and misses nothing.
    driver.get(server.url + "/")
    wait(driver, lambda d: "Live" in d.find_element(By.ID, "live-status").text)
    server.stop()
    check(wait(driver, lambda d: "Reconnecting" in d.find_element(By.ID, "live-status").text, 10), "a stopped server is seen", driver.find_element(By.ID, "live-status").text)
    server.start()
    wait(driver, lambda d: "Live" in d.find_element(By.ID, "live-status").text, 20)
    server.create("Posted after a restart", "<p>back</p>")
    check(wait(driver, lambda d: "Posted after a restart" in texts(d, "#board h2"), 10), "after a restart the page reconnects by itself and shows what is new")


def auditing(driver, server):
    """History with diffs, the past board (in another time zone), erasure."""
    first = server.create("Quarterly figures", "<p>Revenue rose by 4 percent.</p>")
    time.sleep(1.2)
    before_edit = time.time()
    time.sleep(1.2)
    server.api("PATCH", f"/announcements/{first['id']}", {"title": "Quarterly figures (corrected)", "body": "<p>Revenue rose by 5 percent.</p>"}, TOKENS["editor"])
    sign_in(driver, server, "auditor")
    driver.get(server.url + f"/a/{first['id']}")
    driver.find_element(By.LINK_TEXT, "History").click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".timeline"))
    entries = driver.find_elements(By.CSS_SELECTOR, ".timeline > li")
    check(len(entries) == 2 and "Posted by editor" in entries[0].text and "Changed by editor" in entries[1].text, "the history is a timeline: who and when", [e.text for e in entries])
    if len(entries) == 2:
        removed = [e.text for e in entries[1].find_elements(By.TAG_NAME, "del")]
        added = [e.text for e in entries[1].find_elements(By.TAG_NAME, "ins")]
        check("4" in removed and "5" in added and any("(corrected)" in a for a in added), "each change shows a word diff of title and text", (removed, added))
    # The board as it was, picked in the reader's own time zone.
    driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "America/New_York"})
    driver.get(server.url + "/")
    local = driver.execute_script(
        "const d = new Date(arguments[0]); const two = n => String(n).padStart(2, '0');"
        "return `${d.getFullYear()}-${two(d.getMonth()+1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;",
        int(before_edit * 1000))
    picker = driver.find_element(By.ID, "at")
    driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('change'))", picker, local)
    picker.submit()
    wait(driver, lambda d: "The board at" in d.find_element(By.TAG_NAME, "h1").text)
    titles = texts(driver, "#board h2")
    check("Quarterly figures" in titles and "Quarterly figures (corrected)" not in titles, "the board as of a past moment, picked in local time", titles)
    driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "UTC"})
    past_url = driver.current_url
    # An admin erases it, with a reason, after a confirmation.
    sign_in(driver, server, "admin")
    driver.get(server.url + f"/a/{first['id']}")
    driver.find_element(By.LINK_TEXT, "Erase").click()
    wait(driver, lambda d: "for good?" in d.find_element(By.TAG_NAME, "h1").text)
    check("cannot be brought back" in driver.find_element(By.TAG_NAME, "main").text, "erasing asks first, and says it is for good")
    driver.find_element(By.CSS_SELECTOR, "button.danger").click()
    driver.find_element(By.ID, "reason").send_keys("Posted figures before their release")
    driver.find_element(By.CSS_SELECTOR, "button.danger").click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".timeline"))
    timeline = driver.find_element(By.CSS_SELECTOR, ".timeline").text
    check("Erased by admin" in timeline and "Reason: Posted figures before their release" in timeline, "the history shows the erasure with its reason", timeline)
    check("Revenue" not in timeline and "Its texts have been erased" in timeline, "and no text of it", timeline)
    driver.get(past_url)
    erased = driver.find_elements(By.CSS_SELECTOR, ".erased li")
    check(erased and "Posted figures before their release" in erased[0].text, "the past board shows it as erased, with the reason", [e.text for e in erased])
    check("Quarterly figures" not in texts(driver, "#board h2"), "and not its title")


# Each vector, if it ran, would mark the page (`top.xss`, reachable from a same-origin frame) and
# load from the other origin ({hit}); a vector that only loads would load from there.
RUN = "top.xss=&apos;{name}&apos;;new Image().src=&apos;{hit}/{name}&apos;"
XSS_VECTORS = [
    ("script", "<script>top.xss='script';new Image().src='{hit}/script'</script>"),
    ("img-onerror", '<img src=x onerror="{run}">'),
    ("svg-onload", '<svg onload="{run}"></svg>'),
    ("body-onload", '<body onload="{run}">'),
    ("javascript-link", '<a href="javascript:{run}">click me</a>'),
    ("encoded-javascript-link", '<a href="jav&#x61;script&#58;{run}">and me</a>'),
    ("data-link", '<a href="data:text/html,&lt;script&gt;top.xss=1&lt;/script&gt;">data</a>'),
    ("iframe-srcdoc", '<iframe srcdoc="&lt;script&gt;{run}&lt;/script&gt;"></iframe>'),
    ("iframe-src", '<iframe src="{hit}/iframe-src"></iframe>'),
    ("math-mutation", '<math><mtext><table><mglyph><style><img src=x onerror="{run}">'),
    ("svg-style-mutation", '<svg><style><img src=x onerror="{run}"></style></svg>'),
    ("noscript-mutation", '<noscript><p title="</noscript><img src=x onerror={run}>">'),
    ("style-import", '<style>@import url("{hit}/style-import");</style>'),
    ("link-stylesheet", '<link rel=stylesheet href="{hit}/link-stylesheet">'),
    ("meta-refresh", '<meta http-equiv="refresh" content="0;url={hit}/meta-refresh">'),
    ("base-href", '<base href="{hit}/base/"><img src="relative.png">'),
    ("remote-image", '<img src="{hit}/remote-image">'),
    ("object-embed", '<object data="{hit}/object"></object><embed src="{hit}/embed">'),
    ("form", '<form action="{hit}/form"><button id=send>send</button></form>'),
    ("poster-input-image", '<video poster="{hit}/video-poster"></video><input type=image src="{hit}/input-image">'),
    ("inline-style-url", '<div style="background:url({hit}/inline-style)">styled</div>'),
    ("svg-animate", '<svg><animate onbegin="{run}" attributeName=x dur=1s></svg>'),
    ("details-ontoggle", '<details open ontoggle="{run}"><summary>x</summary></details>'),
]


def body_links(driver, server):
    """A link in an announcement's text opens on a click: in the whole window, or in a new one
    when it asks (inside the frame it could open nothing: no page may be framed)."""
    id_ = server.create("Links inside", '<p><a id="same" href="/a/1">the first</a> and <a id="apart" href="/a/2" target="_blank">the second, apart</a></p>')["id"]
    driver.get(server.url + f"/a/{id_}")
    main = driver.current_window_handle
    driver.switch_to.frame(driver.find_element(By.CSS_SELECTOR, "iframe.body"))
    driver.find_element(By.ID, "apart").click()
    driver.switch_to.default_content()
    opened = wait(driver, lambda d: len(d.window_handles) == 2)
    check(opened, "a link that asks for a new window opens one", driver.window_handles)
    if opened:
        driver.switch_to.window([handle for handle in driver.window_handles if handle != main][0])
        check(wait(driver, lambda d: d.current_url.endswith("/a/2")), "with the page it names", driver.current_url)
        driver.close()
        driver.switch_to.window(main)
    driver.switch_to.frame(driver.find_element(By.CSS_SELECTOR, "iframe.body"))
    driver.find_element(By.ID, "same").click()
    driver.switch_to.default_content()
    check(wait(driver, lambda d: d.current_url.endswith("/a/1")), "a link in the text opens its page in the whole window", driver.current_url)
    check(wait(driver, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Seeded announcement 01"), "the page it names, not an error in the frame", driver.page_source[:300])


def vector(name, html, hit):
    return html.replace("{run}", RUN.replace("{name}", name).replace("{hit}", hit)).replace("{hit}", hit)


def xss(driver, server, elsewhere):
    """No vector runs or loads anything from elsewhere, on the board, the announcement, the
    preview, or the history and its diffs."""
    hit = elsewhere.url + "/hit"
    ids = [server.create(f"XSS vector {name}", vector(name, html, hit))["id"] for name, html in XSS_VECTORS]
    # Where a page shows text that is not a body: a title, a search, an erasure's reason.
    hostile = '"><img src=x onerror="{run}"><script>top.xss=1</script>'
    titled = server.create(vector("title", hostile, hit)[:200], "<p>t</p>")["id"]
    ids.append(titled)
    erased = server.create("To be erased", "<p>e</p>")["id"]
    server.api("POST", f"/announcements/{erased}/erase", {"reason": vector("reason", hostile, hit)}, TOKENS["admin"])
    sign_in(driver, server, "admin")
    ran = []
    views = [server.url + "/?q=" + urllib.parse.quote(vector("q", hostile, hit)[:150]), server.url + f"/a/{erased}/history",
             server.url + "/?asOf=2020-01-01T00:00:00Z", server.url + "/sign-in?next=" + urllib.parse.quote("/" + vector("next", hostile, hit))]
    views += [server.url + "/?q=xss+vector"] + [server.url + f"/a/{i}" for i in ids] + [server.url + f"/a/{i}/history" for i in ids]
    for url in views:
        driver.get(url)
        time.sleep(0.25)
        # Click whatever a body offers (links, buttons) inside its frame.
        for frame in driver.find_elements(By.CSS_SELECTOR, "iframe.body"):
            driver.switch_to.frame(frame)
            for element in driver.find_elements(By.CSS_SELECTOR, "a, button"):
                try:
                    element.click()
                except WebDriverException:
                    pass
            driver.switch_to.default_content()
        time.sleep(0.25)
        if driver.execute_script("return window.xss"):
            ran.append((url, driver.execute_script("return window.xss")))
    driver.get(server.url + "/new")
    body = driver.find_element(By.ID, "body")
    for name, html in XSS_VECTORS:
        driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))", body, vector(name, html, hit + "/preview"))
        time.sleep(0.3)
        if driver.execute_script("return window.xss"):
            ran.append(("preview", driver.execute_script("return window.xss")))
    time.sleep(1.5)
    try:
        driver.switch_to.alert
        alert = True
    except NoAlertPresentException:
        alert = False
    check(ran == [] and not alert, f"none of {len(XSS_VECTORS)} XSS vectors in bodies ran, in any view (board, announcement, history and diff, preview), nor markup in a title, a search, a reason or a sign-in's next", ran)
    check(elsewhere.hits == [], "none loaded anything from elsewhere", elsewhere.hits)


def csp_and_csrf(driver, server, elsewhere):
    for path in ("/", "/a/1", "/sign-in", "/assets/none"):
        request = urllib.request.Request(server.url + path)
        try:
            headers = urllib.request.urlopen(request).headers
        except urllib.error.HTTPError as error:
            headers = error.headers
        policy = headers.get("Content-Security-Policy", "")
        check("script-src 'self'" in policy and "unsafe-inline" not in policy and "unsafe-eval" not in policy and "frame-ancestors 'none'" in policy,
              f"{path} sends a CSP without inline script or eval, and frame-ancestors 'none'", policy)
    # A forged post from another site's page, to a signed-in editor.
    elsewhere.target = server.url
    sign_in(driver, server, "editor")
    count = lambda: int(server.api("GET", "/announcements?max=1")[1]["X-Total-Count"])
    total = count()
    driver.get(elsewhere.url + "/forge")
    refused = wait(driver, lambda d: d.current_url.startswith(server.url) and "Refused" in d.find_element(By.TAG_NAME, "main").text)
    check(refused and count() == total, "a form posted from another site is refused, and writes nothing", driver.page_source[:300])
    # The Origin check stands on its own, for a browser that sent the cookie anyway.
    cookie = "announcements_session=" + TOKENS["editor"]
    for origin, expected in ((elsewhere.url, 403), (None, 403), (server.url, 303)):
        request = urllib.request.Request(server.url + "/new", data=b"title=Origin+test&body=", method="POST")
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
        request.add_header("Cookie", cookie)
        if origin:
            request.add_header("Origin", origin)

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *arguments):
                return None
        try:
            status = urllib.request.build_opener(NoRedirect).open(request).status
        except urllib.error.HTTPError as error:
            status = error.code
        check(status == expected, f"a post with the session cookie and Origin {origin or 'missing'}: {expected}", status)
    check(count() == total + 1, "only the same-origin post wrote")


def accessibility(driver, server, views):
    from axe_selenium_python import Axe
    for name, url in views:
        driver.get(url)
        time.sleep(0.2)
        axe = Axe(driver)
        axe.inject()
        results = axe.run(options='{"iframes": false}')
        serious = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in results["violations"] if v["impact"] in ("serious", "critical")]
        check(serious == [], f"axe-core finds no serious or critical violation: {name}", serious)


def keyboard(driver, server):
    driver.get(server.url + "/")
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    first = driver.switch_to.active_element
    check(first.text == "Skip to the content", "the first Tab reaches the skip link", first.text)
    outline = driver.execute_script("const s = getComputedStyle(document.activeElement); return s.outlineStyle + ' ' + s.outlineWidth")
    check(not outline.startswith("none"), "focus is visible", outline)
    link = None
    for _ in range(40):
        driver.switch_to.active_element.send_keys(Keys.TAB)
        element = driver.switch_to.active_element
        if element.get_attribute("href") and "/a/" in element.get_attribute("href"):
            link = element
            break
    check(link is not None, "Tab reaches the announcements")
    if link:
        expected = link.text
        link.send_keys(Keys.ENTER)
        check(wait(driver, lambda d: d.find_element(By.TAG_NAME, "h1").text == expected), "Enter opens one")


def locale_and_layout(driver, server):
    driver.execute_cdp_cmd("Emulation.setLocaleOverride", {"locale": "de-DE"})
    driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Tokyo"})
    driver.get(server.url + "/a/1")
    element = driver.find_element(By.CSS_SELECTOR, ".meta time")
    expected = driver.execute_script(
        "return new Intl.DateTimeFormat('de-DE', {dateStyle: 'medium', timeStyle: 'short', timeZone: 'Asia/Tokyo'}).format(new Date(arguments[0]))",
        element.get_attribute("datetime"))
    check(element.text == expected and "UTC" not in element.text, "dates are in the reader's locale and time zone", (element.text, expected))
    driver.execute_cdp_cmd("Emulation.setLocaleOverride", {})
    driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "UTC"})
    long_word = "Überschrift" * 18
    titles = {"long": long_word[:200], "rtl": "הודעה חשובה לכל העובדים: הכניסה הראשית סגורה", "arabic": "إعلان مهم: المدخل الرئيسي مغلق اليوم",
              "emoji": "🎉 Launch party 🚀 on the roof 🍕🍕🍕", "cjk": "全体会議のお知らせ：来週月曜日の午前十時から大会議室で開催します"}
    ids = {key: server.create(title, "<p>" + title + "</p>")["id"] for key, title in titles.items()}
    for width in (1280, 360):
        set_width(driver, width)
        for key, id_ in ids.items():
            driver.get(server.url + f"/a/{id_}")
            overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
            heading = driver.find_element(By.TAG_NAME, "h1")
            check(overflow <= 0 and heading.text == titles[key], f"a {key} title lays out at {width} px without scrolling sideways", overflow)
            if key in ("rtl", "arabic"):
                check(driver.execute_script("return getComputedStyle(arguments[0]).direction", heading) == "rtl", f"a {key} title reads right to left")
        driver.get(server.url + "/")
        check(driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth") <= 0, f"the board fits {width} px")
    set_width(driver, 1280)


def first_view_bytes(driver, server):
    """What the first view of 20 titles costs on the wire, compressed: page, stylesheet, script."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.delete_all_cookies()
    driver.get(server.url + "/")
    wait(driver, lambda d: d.execute_script("return document.readyState") == "complete")
    total = driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0];"
        "return n.transferSize + performance.getEntriesByType('resource').filter(r => !r.name.includes('/events')).reduce((s, r) => s + r.transferSize, 0)")
    check(0 < total <= 50_000, "the first view of 20 titles is at most 50 KB on the wire, everything included", total)
    return total


def measure(binary):
    """The first view on a throttled network: 400 ms round trip, 400 kbit/s each way (BENCHMARKS.md)."""
    server = Server(binary, "config.yaml")
    server.start()
    # Twenty announcements of distinct text (the seed's six, and fourteen more), as a board holds:
    # words drawn at random (a fixed seed) compress as prose does, not as repeated lines would.
    import random
    words = open(__file__).read().split()
    chance = random.Random(35)
    for n in range(14):
        title = " ".join(chance.choice(words) for _ in range(chance.randint(4, 9))).strip("\"'#()[]{}.,:;")
        body = "".join(f"<p>{' '.join(chance.choice(words) for _ in range(60))}</p>" for _ in range(3))
        server.create(title[:200] or f"Announcement {n}", body.replace("<", "&lt;").replace("&lt;p>", "<p>").replace("&lt;/p>", "</p>"))
    driver = browser()
    try:
        results = []
        for run in range(5):
            driver.execute_cdp_cmd("Network.enable", {})
            driver.execute_cdp_cmd("Network.clearBrowserCache", {})
            driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, "latency": 400, "downloadThroughput": 50_000, "uploadThroughput": 50_000})
            driver.get("about:blank")
            driver.get(server.url + "/")
            wait(driver, lambda d: d.execute_script("return document.readyState") == "complete", 30)
            figures = driver.execute_script(
                "const n = performance.getEntriesByType('navigation')[0];"
                "const paint = performance.getEntriesByName('first-contentful-paint')[0];"
                "const resources = performance.getEntriesByType('resource').filter(r => !r.name.includes('/events'));"
                "return {titles: document.querySelectorAll('#board h2').length, bytes: n.transferSize + resources.reduce((s, r) => s + r.transferSize, 0),"
                " fcp: paint ? paint.startTime : null, html: n.transferSize, responseEnd: n.responseEnd}")
            results.append(figures)
            print(json.dumps(figures))
        fcps = sorted(r["fcp"] for r in results)
        print(f"first view: {results[0]['titles']} titles, {results[0]['bytes']} bytes on the wire (HTML {results[0]['html']}); "
              f"titles on screen (first contentful paint) median {fcps[len(fcps) // 2]:.0f} ms, worst {fcps[-1]:.0f} ms, of {len(fcps)} loads")
    finally:
        driver.quit()
        server.stop()


def screenshots(binary, folder):
    """The README's pictures: the board and an announcement of the default config.yaml's seed, at
    1280 and 360 pixels wide."""
    server = Server(binary, "config.yaml")
    server.start()
    driver = browser()
    try:
        os.makedirs(folder, exist_ok=True)
        sign_in(driver, server, "editor")
        for width, height, suffix in ((1280, 800, "desktop"), (360, 760, "phone")):
            set_width(driver, width, height)
            driver.get(server.url + "/")
            time.sleep(0.5)
            driver.save_screenshot(os.path.join(folder, f"board-{suffix}.png"))
            driver.get(server.url + "/a/1")
            time.sleep(0.5)
            driver.save_screenshot(os.path.join(folder, f"announcement-{suffix}.png"))
        print(f"wrote {folder}/board-desktop.png, announcement-desktop.png, board-phone.png, announcement-phone.png")
    finally:
        driver.quit()
        server.stop()


def main():
    binary = sys.argv[1]
    if "--measure" in sys.argv:
        measure(binary)
        return 0
    if "--screenshots" in sys.argv:
        screenshots(binary, sys.argv[sys.argv.index("--screenshots") + 1])
        return 0
    server = Server(binary)
    server.start()
    elsewhere = Elsewhere()
    driver = browser()
    try:
        print(f"{driver.capabilities.get('browserName')} {driver.capabilities.get('browserVersion')} against {server.url}:")
        first_view_bytes(driver, server)
        for step in (reading, searching, signing_in_and_out, posting, frames_fit, editing_and_deleting, controls_follow_roles, live_updates, auditing):
            timed(step, driver, server)
        timed(body_links, driver, server)
        timed(xss, driver, server, elsewhere)
        timed(csp_and_csrf, driver, server, elsewhere)
        timed(keyboard, driver, server)
        timed(locale_and_layout, driver, server)
        timed(without_script, server)
        sign_in(driver, server, "admin")
        views = [("board", server.url + "/"), ("announcement", server.url + "/a/1"), ("search", server.url + "/?q=seeded"),
                 ("editor", server.url + "/new"), ("edit", server.url + "/a/2/edit"), ("delete", server.url + "/a/2/delete"),
                 ("erase", server.url + "/a/2/erase"), ("history", server.url + "/a/2/history"), ("not found", server.url + "/a/9999"), ("no page", server.url + "/announcement"),
                 ("past board", server.url + "/?asOf=2020-01-01T00:00:00Z")]
        for width in (1280, 360):
            set_width(driver, width)
            accessibility(driver, server, [(f"{name} at {width} px", url) for name, url in views])
        sign_out(driver)
        accessibility(driver, server, [("sign-in", server.url + "/sign-in")])
    except Exception:
        traceback.print_exc()
        failures.append("an exception")
    finally:
        driver.quit()
        server.stop()
    print(f"{len(failures)} failed" if failures else "every browser check holds")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
