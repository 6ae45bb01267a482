// The pages' one script. Every page works without it; it only adds: dates in the reader's own
// locale and time zone, frames sized to their text, the editor's live preview, the past board's
// time zone, and live updates from the public event feed (`/events`).

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** Shows every `<time datetime>` under `root` in the reader's locale and time zone. */
function localizeTimes(root) {
  for (const element of root.querySelectorAll('time[datetime]')) {
    const date = new Date(element.dateTime);
    if (!Number.isNaN(date.getTime())) {
      element.textContent = dateFormat.format(date);
      element.title = element.dateTime;
    }
  }
}

/**
 * Sizes a body's frame to its document (the frame is same-origin, and runs no script): the
 * document's own height (a scrollHeight never goes below the frame's, so a frame never shrank),
 * with the frame's padding and border on top (the editor's preview has them: its last line was
 * cut). Again whenever the frame's width changes (a turned phone, a resized window, zoom), which
 * wraps the text anew.
 */
function fitFrame(frame) {
  const fit = () => {
    const root = frame.contentDocument && frame.contentDocument.documentElement;
    if (!root) return;
    const style = getComputedStyle(frame);
    const around = frame.offsetHeight - frame.clientHeight + parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
    frame.style.height = Math.ceil(root.getBoundingClientRect().height + around) + 'px';
  };
  frame.addEventListener('load', fit);
  let width = frame.clientWidth;
  new ResizeObserver(() => {
    if (frame.clientWidth === width) return;
    width = frame.clientWidth;
    fit();
  }).observe(frame);
  fit();
}

/** The editor's preview: the text as readers will see it, in the same sandboxed frame. */
function previewAsTyped() {
  const text = document.getElementById('body');
  const frame = document.getElementById('preview');
  if (!text || !frame) return;
  let pending;
  text.addEventListener('input', () => {
    clearTimeout(pending);
    pending = setTimeout(() => { frame.srcdoc = frame.dataset.head + text.value; }, 120);
  });
}

/** The past board's time: the form's value is the reader's local time; `tz` says its offset. */
function pastInLocalTime() {
  const at = document.getElementById('at');
  const offset = document.getElementById('tz');
  if (!at || !offset) return;
  if (at.dataset.utc) {
    // The server fills in UTC: show it in local time (from the attribute, which a form restored
    // by the browser does not change).
    const date = new Date(at.dataset.utc + 'Z');
    if (!Number.isNaN(date.getTime())) at.value = localInputValue(date);
  }
  const update = () => {
    const date = new Date(at.value);
    offset.value = Number.isNaN(date.getTime()) ? '0' : String(date.getTimezoneOffset());
  };
  at.addEventListener('change', update);
  at.form.addEventListener('submit', update);
  update();
}

function localInputValue(date) {
  const two = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}T${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

/**
 * Live updates: the board fetches itself again after each event (its HTML, as the server renders
 * it), an open announcement says when it was changed or deleted. EventSource reconnects by itself
 * and resumes after the last event it had (`Last-Event-ID`); when the server refuses it (a
 * restart in progress) a new one is opened after a pause.
 */
function followTheLog() {
  const board = document.getElementById('board');
  const article = document.querySelector('article.announcement');
  const target = board && board.hasAttribute('data-live') ? board : article;
  if (!target || !window.EventSource) return;
  const status = document.getElementById('live-status');
  let seq = Number(target.dataset.seq || 0);
  let source;
  let refreshing = null;
  let again = false;

  const refresh = async () => {
    if (refreshing) { again = true; return; }
    refreshing = (async () => {
      do {
        again = false;
        try {
          const response = await fetch(location.href, { headers: { Accept: 'text/html' }, cache: 'no-store' });
          if (!response.ok) break;
          const page = new DOMParser().parseFromString(await response.text(), 'text/html');
          const fresh = page.getElementById('board');
          if (!fresh) break;
          const focused = document.activeElement && board.contains(document.activeElement) ? document.activeElement.getAttribute('href') : null;
          board.innerHTML = fresh.innerHTML;
          board.dataset.seq = fresh.dataset.seq;
          localizeTimes(board);
          if (focused) board.querySelector(`a[href="${CSS.escape(focused)}"]`)?.focus();
        } catch {
          break;
        }
      } while (again);
      refreshing = null;
    })();
  };

  const tell = (type, event) => {
    const notice = document.getElementById('change-notice');
    const when = dateFormat.format(new Date(event.at));
    notice.textContent = type === 'edited'
      ? `This announcement was changed ${when}. `
      : `This announcement was ${type} ${when}.`;
    if (type === 'edited') {
      const link = document.createElement('a');
      link.href = location.pathname;
      link.textContent = 'Show the new version';
      notice.append(link);
    }
    if (type === 'erased') {
      // Its texts are gone from the log: from this page too.
      const heading = document.getElementById('heading');
      heading.textContent = `Announcement ${article.dataset.id}`;
      document.title = `${heading.textContent} · Announcements`;
      const gone = document.createElement('p');
      gone.className = 'empty';
      gone.textContent = 'Its texts have been erased.';
      article.querySelector('iframe.body, p.empty')?.replaceWith(gone);
    }
    notice.hidden = false;
  };

  let retry;
  const connect = () => {
    clearTimeout(retry);
    if (source) source.close();
    source = new EventSource(`/events?after=${seq}`);
    source.addEventListener('open', () => {
      status.textContent = 'Live: changes appear here as they happen.';
    });
    for (const type of ['created', 'edited', 'deleted', 'erased']) {
      source.addEventListener(type, (message) => {
        seq = Math.max(seq, Number(message.lastEventId) || 0);
        if (board) {
          refresh();
        } else {
          const event = JSON.parse(message.data);
          if (event.id === Number(article.dataset.id)) tell(type, event);
        }
      });
    }
    source.addEventListener('error', () => {
      status.textContent = 'Reconnecting to the server…';
      if (source.readyState === EventSource.CLOSED && !hidden) retry = setTimeout(connect, 2000);
    });
  };
  // A page left for another closes its stream (a browser opens few connections to one server,
  // and one kept for the back/forward cache would hold one of them), and opens it again when it
  // comes back, from the last event it had.
  let hidden = false;
  addEventListener('pagehide', () => {
    hidden = true;
    clearTimeout(retry);
    source.close();
  });
  addEventListener('pageshow', (event) => {
    hidden = false;
    if (event.persisted) connect();
  });
  connect();
}

/**
 * A signed-in page shown again from the back/forward cache (Back after signing out, in Chromium,
 * which keeps even `no-store` pages there) is fetched again: the server decides what it shows now.
 */
function revalidateSignedIn() {
  addEventListener('pageshow', (event) => {
    if (event.persisted && document.body.hasAttribute('data-signed-in')) location.reload();
  });
}

localizeTimes(document);
revalidateSignedIn();
for (const frame of document.querySelectorAll('iframe.body')) fitFrame(frame);
previewAsTyped();
pastInLocalTime();
followTheLog();
