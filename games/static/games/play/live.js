// Keeps a match's detail fresh. With a live stream (GET /api/v1/matches/{id}/stream, Server-
// Sent Events) it listens to it; without one (the route is not there, the browser has no
// EventSource, the stream fails before it opens) it polls the match with its ETag
// (If-None-Match: a bodiless 304 while nothing changed).
//
// A stream can also stall without an error: a proxy that buffers it, a connection gone
// half-open, a request that never opens. The server writes a heartbeat every
// ``heartbeatSeconds``, but as an SSE comment, which EventSource does not show; so while
// the stream has said nothing for twice that (and a second more), the page reads the
// match anyway, and a stream that never opened in that time is given up for polling.
// When an open stream breaks, EventSource reconnects on its own (after the server's
// ``retry``, 2 s); while that reconnection has not opened ``reconnectWaitMs`` after the
// break, the page reads the match at that pace, so that a reconnection that hangs costs
// seconds, not the quiet spell.
import { api } from "./api.js";

export class MatchFeed {
  constructor({ url, streamUrl, heartbeatSeconds = 15, reconnectWaitMs = 5000, onDetail, onError }) {
    this.url = url;
    this.streamUrl = streamUrl;
    this.onDetail = onDetail;
    this.onError = onError;
    this.etag = null;
    this.timer = null;
    this.source = null;
    this.mode = "none";
    this.interval = 1000;
    this.busy = false;
    this.stopped = false;
    this.quietMs = (2 * heartbeatSeconds + 1) * 1000;
    this.reconnectWaitMs = reconnectWaitMs;
    this.heard = 0;
    this.watchdog = null;
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden && !this.stopped) this.refresh();
    });
  }

  // A detail the page got another way (a move's answer) counts as the latest.
  seen(data, etag) {
    if (etag) this.etag = etag;
  }

  async refresh() {
    if (this.busy) return;
    this.busy = true;
    try {
      const answer = await api(this.url, { etag: this.etag });
      if (answer.etag) this.etag = answer.etag;
      if (answer.status !== 304) this.onDetail(answer.data);
    } catch (error) {
      this.onError(error);
    } finally {
      this.busy = false;
    }
  }

  start() {
    if (this.streamUrl && typeof EventSource === "function") this.listen();
    else this.poll();
  }

  listen() {
    this.mode = "stream";
    let opened = false;
    const source = new EventSource(this.streamUrl, { withCredentials: true });
    this.source = source;
    // Each event carries the match as this viewer sees it (``detail``), the very body
    // GET /api/v1/matches/{id} answers, and the ETag of it.
    const changed = (event) => {
      this.heard = Date.now();
      let data = null;
      try { data = JSON.parse(event.data); } catch (e) { data = null; }
      if (data && data.detail && "current_deal" in data.detail) {
        if (data.etag && data.etag === this.etag) return; // shown already (the first event)
        if (data.etag) this.etag = data.etag;
        this.onDetail(data.detail);
      } else {
        this.refresh(); // anything else says "something changed": read the match
      }
    };
    let brokeAt = 0; // when the open stream broke, while EventSource reconnects (else 0)
    source.onopen = () => { opened = true; brokeAt = 0; this.heard = Date.now(); };
    source.onmessage = changed;
    // The event types the stream sends (docs/bots.md, "Streams").
    [
      "match", "seat_joined", "match_started", "card_played", "deal_finished",
      "deal_started", "match_finished", "match_aborted", "rating_changed", "match_event",
    ].forEach((name) => source.addEventListener(name, changed));
    const giveUp = () => {
      clearInterval(this.watchdog);
      source.close();
      this.source = null;
      this.poll();
    };
    source.onerror = () => {
      // No stream here (or it ended for good): poll instead.
      if (!opened || source.readyState === EventSource.CLOSED) giveUp();
      else if (!brokeAt) brokeAt = Date.now(); // reconnecting
    };
    this.heard = Date.now();
    clearInterval(this.watchdog);
    this.watchdog = setInterval(() => {
      if (this.stopped || this.source !== source) return;
      const now = Date.now();
      if (brokeAt && now - brokeAt >= this.reconnectWaitMs) {
        brokeAt = now; // the reconnection has not opened yet: read, and again after as long
        if (!document.hidden) this.refresh();
        return;
      }
      if (now - this.heard < this.quietMs) return;
      this.heard = now;
      if (!opened) giveUp();
      else if (!document.hidden) this.refresh();
    }, Math.min(this.quietMs / 4, this.reconnectWaitMs / 2, 5000));
  }

  poll() {
    this.mode = "poll";
    this.soon(this.interval);
  }

  // Polls after ``ms`` instead of the usual pace (after a move: a bot replies at once).
  soon(ms) {
    if (this.mode !== "poll" || this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), ms);
  }

  async tick() {
    if (this.stopped) return;
    if (!document.hidden) await this.refresh();
    if (!this.stopped) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.tick(), this.interval);
    }
  }

  // How often to poll: often while others play, rarely when the page waits on its player.
  setPace(ms) {
    this.interval = ms;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.watchdog);
    if (this.source) this.source.close();
  }
}
