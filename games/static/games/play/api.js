// The public REST API (/api/v1/...) as the pages call it: the session's cookie, its CSRF
// token on writes, JSON in and out, and every error as {code, message, details}.

export class ApiError extends Error {
  // ``status`` 0: no answer at all, ``failure`` says which ("network" or "timeout").
  constructor(status, body, failure = "network") {
    super((body && body.message) || "HTTP " + status);
    this.status = status;
    this.code = (body && body.code) || (status === 0 ? failure : "error");
    this.details = (body && body.details) || {};
  }
}

const csrf = () => (document.querySelector("[data-csrf]") || {}).dataset?.csrf || "";

// A fresh Idempotency-Key per intended write (crypto.randomUUID needs a secure context).
export function newKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
}

// No request waits for ever: one a server or proxy never answers (or stops answering
// halfway) would leave the page waiting on it, a move's card held or a deal's end
// unannounced. After ``timeoutMs`` it is abandoned and fails with the code "timeout"; a
// write may still have landed, which the next read of the match shows.
export const TIMEOUT_MS = 20000;

// Returns {status, data, etag}; a 304 has data null. Throws ApiError.
export async function api(url, { method = "GET", body, etag, key, timeoutMs = TIMEOUT_MS } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRFToken"] = csrf();
  if (etag) headers["If-None-Match"] = etag;
  if (key) headers["Idempotency-Key"] = key;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    let response;
    try {
      response = await fetch(url, {
        method,
        headers,
        credentials: "same-origin",
        cache: "no-store",
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: abort.signal,
      });
    } catch (e) {
      throw new ApiError(0, null, abort.signal.aborted ? "timeout" : "network");
    }
    if (response.status === 304) return { status: 304, data: null, etag: response.headers.get("ETag") };
    // The body is read under the same clock: a stalled body fails as a timeout too.
    let data = null;
    if (response.status !== 204) {
      try {
        data = await response.json();
      } catch (e) {
        if (abort.signal.aborted) throw new ApiError(0, null, "timeout");
      }
    }
    if (!response.ok) throw new ApiError(response.status, data);
    return { status: response.status, data, etag: response.headers.get("ETag") };
  } finally {
    clearTimeout(timer);
  }
}

// The page's words, in its language (games/play/strings.py).
export const T = JSON.parse(document.getElementById("play-strings").textContent);

export function fmt(template, values) {
  return template.replace(/%\((\w+)\)s/g, (_, name) => (values[name] === undefined ? "" : String(values[name])));
}

export function errorText(error) {
  return T.errors[error.code] || error.message || T.errors.error;
}

// A match's time control in words ("30 s per move"), or "" for an untimed match; with
// ``withTimeout``, what running out does ("30 s per move, then a bot plays").
export function timeControlText(match, withTimeout) {
  const control = match.time_control;
  if (!control) return "";
  const words = control.per_move_seconds
    ? fmt(T.per_move_seconds, { n: control.per_move_seconds })
    : fmt(T.per_move_hours, { n: control.per_move_hours });
  const then = withTimeout && T.on_timeout[match.on_timeout];
  return then ? fmt(then, { time: words }) : words;
}
