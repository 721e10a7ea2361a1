// The lobby, /play/: creates matches (POST /api/v1/matches), lists open tables
// (GET /api/v1/matches?open=true) and my matches (?mine=true), joins (POST .../join).
import { api, T, fmt, errorText, newKey, timeControlText } from "./api.js";

const root = document.getElementById("lobby");
// The lobby's own words (games/play/pages.py, lobby_strings), beside the play pages'.
const L = JSON.parse(document.getElementById("lobby-strings").textContent);
const me = root.dataset.me;
const $ = (id) => document.getElementById(id);
const tableUrl = (id) => location.pathname.replace(/\/?$/, "/") + id + "/";

// An error is said where it happened (``near``: a form's own error line, else the page's)
// and brought into view with the focus: on a phone the page's line is screens away.
function showError(error, near, body) {
  say(createErrorText(error, body) || (errorText(error) + (error.details && Object.keys(error.details).length ? " " + detailText(error.details) : "")), near);
}

// Says ``text`` as the one error on the page (any other, older one is taken away).
function say(text, near) {
  const el = (near && near.querySelector(".form-error")) || $("lobby-error");
  clearErrors();
  el.textContent = text;
  el.hidden = false;
  el.focus();
  el.scrollIntoView({ block: "center" });
}

// What is wrong with a match asked for, in the page's words: an unknown user name, the
// person inviting themselves, a name given twice. Null: the API's message says it.
function createErrorText(error, body) {
  if (error.code !== "invalid_match" || !body || !error.details) return null;
  const { user, seat } = error.details;
  if (typeof user === "string") return fmt(T.no_such_user, { name: user });
  const asked = typeof seat === "number" && body.seats ? body.seats[seat - 1] : null;
  if (asked && asked.user) {
    if (asked.user.toLowerCase() === me.toLowerCase()) return T.invite_yourself;
    return fmt(T.invited_twice, { name: asked.user });
  }
  return null;
}

// An error said is about the form as it was: once the form changes, or is sent again,
// it is taken away (a new problem is said anew).
function clearErrors() {
  document.querySelectorAll(".lobby .error").forEach((el) => {
    el.hidden = true;
    el.textContent = "";
  });
}

function detailText(details) {
  return Object.values(details).flat().filter((v) => typeof v === "string").join(" ");
}

function chosen(form, name) {
  const input = form.querySelector('input[name="' + name + '"]:checked');
  return input ? input.value : null;
}

async function create(body, button) {
  button.disabled = true;
  try {
    const answer = await api(root.dataset.api, { method: "POST", body, key: newKey() });
    location.assign(tableUrl(answer.data.id));
  } catch (error) {
    showError(error, button.form, body);
    button.disabled = false;
  }
}

// The time control a form asks for (POST /matches' time_control, on_timeout and, when a
// bot plays for a player out of time, that bot's level): none by default; live, seconds a
// move; correspondence, hours a move.
function timeControl(form) {
  const clock = chosen(form, "clock");
  let time_control;
  if (clock === "live") time_control = { per_move_seconds: Number(form.elements.seconds.value) };
  else if (clock === "correspondence") time_control = { per_move_hours: Number(form.elements.hours.value) };
  else return {};
  const on_timeout = chosen(form, "on_timeout");
  const body = { time_control, on_timeout };
  if (on_timeout === "bot") body.timeout_bot = form.elements.timeout_bot.value;
  return body;
}

// Each form shows (and enables) the clock's own fields for the clock chosen.
document.querySelectorAll("form.create").forEach((form) => {
  const update = () => {
    const clock = chosen(form, "clock");
    form.querySelectorAll(".clock-options").forEach((box) => {
      const on = box.dataset.clock.split(" ").includes(clock);
      box.hidden = !on;
      box.disabled = !on;
    });
  };
  form.querySelectorAll('input[name="clock"]').forEach((input) => input.addEventListener("change", update));
  update();
  const stale = () => form.querySelectorAll(".form-error").forEach((el) => { el.hidden = true; el.textContent = ""; });
  form.addEventListener("input", stale);
  form.addEventListener("change", stale);
});

$("vs-bot").addEventListener("submit", (event) => {
  event.preventDefault();
  clearErrors();
  const form = event.currentTarget;
  const players = Number(chosen(form, "players"));
  const level = chosen(form, "level");
  const seats = [];
  for (let i = 1; i < players; i++) seats.push({ bot: level });
  create({ players, format: chosen(form, "format"), seats, ...timeControl(form) }, $("play-bot"));
});

// At a table of 4, where the names invited sit: said under the field, and its description.
function inviteSeats() {
  const four = chosen($("vs-people"), "players") === "4";
  $("invite-seats").hidden = !four;
  if (four) $("invite").setAttribute("aria-describedby", "invite-seats");
  else $("invite").removeAttribute("aria-describedby");
}
$("vs-people").querySelectorAll('input[name="players"]').forEach((input) => input.addEventListener("change", inviteSeats));
inviteSeats();

$("vs-people").addEventListener("submit", (event) => {
  event.preventDefault();
  clearErrors();
  const form = event.currentTarget;
  const players = Number(chosen(form, "players"));
  const names = $("invite").value.split(",").map((s) => s.trim()).filter(Boolean);
  // More names than the other seats: said, and nothing created (no name left out).
  if (names.length > players - 1) {
    say(fmt(L.too_many_invited[String(players)] || L.too_many_invited["4"], { n: names.length }), form);
    $("invite").setAttribute("aria-invalid", "true");
    return;
  }
  $("invite").removeAttribute("aria-invalid");
  const seats = [];
  for (let i = 1; i < players; i++) seats.push(names[i - 1] ? { user: names[i - 1] } : "open");
  create({ players, format: chosen(form, "format"), seats, ...timeControl(form) }, $("open-table"));
});

// The others at the table by name (an invited person not there yet: "(waiting)", or on a
// table that was called off, "(did not join)"); open seats are not people: a table with
// nobody else yet says it waits for players, or, called off, that nobody joined. In a
// match of four the partner (the seat opposite, the same team: docs/rules.md) is "with",
// the other team "vs": "with bob · vs carol, dave". A table of four one has no seat at
// (Open tables) names its two pairs as they sit, open seats included: "alice & open seat
// vs bob (waiting) & open seat"; who would be one's partner depends on the seat taken.
function opponents(match) {
  const pending = match.status === "waiting" ? T.status.waiting : L.did_not_join;
  const name = (s) => s.user + (s.joined ? "" : " (" + pending + ")");
  const mine = match.seats.find((s) => s.user === me);
  if (match.players === 4 && !mine) {
    const pair = (team) => match.seats.filter((s) => s.team === team).map((s) => (s.user ? name(s) : T.open_seat)).join(" & ");
    return fmt(L.pairs, { first: pair(0), second: pair(1) });
  }
  const others = match.seats.filter((s) => s.user && s.user !== me);
  const partner = match.players === 4 && mine ? others.find((s) => s.team === mine.team) : null;
  const against = others.filter((s) => s !== partner).map(name);
  const words = [];
  if (partner) words.push(fmt(L.with_partner, { name: name(partner) }));
  if (against.length) words.push(T.vs + " " + against.join(", "));
  if (words.length) return words.join(" · ");
  return match.status === "waiting" ? T.waiting : L.nobody_joined;
}

function describe(match) {
  const words = fmt(T.match_of, { format: T.formats[match.format] || match.format, players: match.players });
  const clock = timeControlText(match, true);
  return clock ? words + " · " + clock : words;
}

function item(match, extra) {
  const li = document.createElement("li");
  li.dataset.match = match.id;
  const a = document.createElement("a");
  a.href = tableUrl(match.id);
  a.textContent = opponents(match);
  const info = document.createElement("span");
  info.className = "info";
  info.textContent = describe(match) + " · " + (T.status[match.status] || match.status);
  li.append(a, info);
  if (extra) li.appendChild(extra);
  return li;
}

function empty(list) {
  const li = document.createElement("li");
  li.className = "empty";
  li.textContent = T.nothing_here;
  list.appendChild(li);
}

// A list is drawn again only when what it shows changed, and the focus stays on the same
// match's control (a refresh must not take a button from under a finger or a keyboard).
function redraw(list, key, fill) {
  if (list.dataset.key === key) return false;
  const focused = list.contains(document.activeElement) ? document.activeElement : null;
  const where = focused && focused.closest("li[data-match]");
  const again = where ? { match: where.dataset.match, role: focused.dataset.role || focused.tagName } : null;
  list.replaceChildren();
  fill();
  list.dataset.key = key;
  if (again) {
    const row = list.querySelector('li[data-match="' + again.match + '"]');
    const target = row && Array.from(row.querySelectorAll("a, button")).find((el) => (el.dataset.role || el.tagName) === again.role);
    if (target) target.focus();
  }
  return true;
}

// One read at a time per list; a read asked for meanwhile follows the one under way.
function serial(load) {
  let running = null;
  let again = false;
  const run = async () => {
    if (running) { again = true; return running; }
    running = (async () => {
      do { again = false; await load(); } while (again);
    })();
    try { await running; } finally { running = null; }
  };
  return run;
}

const loadOpen = serial(async () => {
  const list = $("open-list");
  try {
    const answer = await api(root.dataset.api + "?open=true&status=waiting");
    // The API's open tables include those with a seat kept for this person (an invitation):
    // listed in My matches, with the rest of their own, and not a second time here.
    const rows = answer.data.results.filter((m) => !m.seats.some((s) => s.user === me));
    redraw(list, JSON.stringify(rows), () => {
      rows.forEach((match) => {
        const button = rowControl("button", "primary", "join", T.join, match);
        button.addEventListener("click", async () => {
          button.disabled = true;
          try {
            await api(root.dataset.api + "/" + match.id + "/join", { method: "POST", body: {} });
            location.assign(tableUrl(match.id));
          } catch (error) {
            showError(error);
            button.disabled = false;
            loadOpen();
          }
        });
        list.appendChild(item(match, button));
      });
      if (!rows.length) empty(list);
    });
  } catch (error) {
    if (list.getAttribute("aria-busy") !== "false") showError(error); // a refresh that fails says nothing
  }
  list.setAttribute("aria-busy", "false");
});

// "Cancel" on a table of one's own still waiting for players: the API's abort, once the
// person confirms (as Resign asks at the table).
function cancelButton(match) {
  const button = rowControl("button", "danger", "cancel", T.cancel, match);
  button.addEventListener("click", async () => {
    if (!window.confirm(T.cancel_confirm)) return;
    button.disabled = true;
    try {
      await api(root.dataset.api + "/" + match.id + "/abort", { method: "POST" });
    } catch (error) {
      showError(error);
      button.disabled = false;
    }
    loadMine();
  });
  return button;
}

// A finished match's deals on the replay page (its first deal; the page links the others).
function replayLink(match) {
  const a = rowControl("a", "replay", "replay", T.replay_match, match);
  a.href = tableUrl(match.id) + "replay/";
  return a;
}

// A control of a match's row: its words, and for screen readers which match it is for.
function rowControl(tag, className, role, label, match) {
  const control = document.createElement(tag);
  if (tag === "button") control.type = "button";
  control.className = className;
  control.dataset.role = role;
  control.textContent = label;
  control.setAttribute("aria-label", label + ": " + opponents(match));
  return control;
}

// When a match that is over ended ("12 Mar 2026, 14:05", in the page's language), so that
// rows alike ("vs bot-greedy") can be told apart.
const whenFormat = new Intl.DateTimeFormat(document.documentElement.lang || undefined, {
  dateStyle: "medium",
  timeStyle: "short",
});

function endedAt(match) {
  if (!match.finished_at) return null;
  const time = document.createElement("time");
  time.className = "ended-at";
  time.dateTime = match.finished_at;
  time.textContent = whenFormat.format(new Date(match.finished_at));
  return time;
}

// My matches, newest first; for those being played, whose turn it is (the match's detail).
// The API's pages of 20: "More matches" reads the next one, older matches; the list read
// again (a change, a poll) reads as many pages as are shown, so nothing shown drops out.
let minePages = 1;
let mineMore = false;

async function readMine() {
  const seen = new Set();
  const matches = [];
  let more = false;
  for (let page = 1; page <= minePages; page++) {
    const answer = await api(root.dataset.api + "?mine=true" + (page > 1 ? "&page=" + page : ""));
    answer.data.results.forEach((match) => {
      if (!seen.has(match.id)) { seen.add(match.id); matches.push(match); }
    });
    more = !!answer.data.next;
    if (!more) { minePages = page; break; }
  }
  return { matches, more };
}

const loadMine = serial(async () => {
  const list = $("my-list");
  try {
    const { matches, more } = await readMine();
    mineMore = more;
    const drawn = redraw(list, JSON.stringify([matches, more]), () => {
      matches.forEach((match) => {
        const turn = document.createElement("span");
        turn.className = "whose-turn";
        const li = item(match, turn);
        const when = endedAt(match);
        if (when) li.querySelector(".info").append(" · ", when);
        if (match.status === "finished") {
          const mine = match.seats.find((s) => s.user === me);
          turn.textContent = !mine ? "" : match.winner === null ? T.drawn : mine.team === match.winner ? T.won : T.lost;
        }
        if (match.status === "finished") {
          li.classList.add("has-replay");
          li.appendChild(replayLink(match));
        }
        if (match.status === "waiting" && match.created_by === me) li.replaceChild(cancelButton(match), turn);
        list.appendChild(li);
      });
      if (!matches.length) empty(list);
    });
    $("my-more").hidden = !mineMore;
    placeMine();
    if (!drawn) return;
    await Promise.all(
      matches.filter((m) => m.status === "active").slice(0, 10).map(async (match) => {
        try {
          const d = (await api(root.dataset.api + "/" + match.id)).data;
          const deal = d.current_deal;
          const el = list.querySelector('[data-match="' + match.id + '"] .whose-turn');
          if (!deal || deal.turn === null || !el) return;
          el.textContent = deal.turn === d.your_seat ? T.your_turn_short : fmt(T.their_turn, { name: d.seats[deal.turn].user });
          if (deal.turn === d.your_seat) el.classList.add("mine");
        } catch (error) {
          // The list still shows the match.
        }
      })
    );
  } catch (error) {
    if (list.getAttribute("aria-busy") !== "false") showError(error);
  }
  list.setAttribute("aria-busy", "false");
});

$("my-more").addEventListener("click", async () => {
  const button = $("my-more");
  const list = $("my-list");
  const before = list.querySelectorAll("li[data-match]").length;
  button.disabled = true;
  minePages += 1;
  await loadMine();
  button.disabled = false;
  // The focus goes to the first of the older matches, so that a keyboard carries on there.
  const first = list.querySelectorAll("li[data-match]")[before];
  const link = first && first.querySelector("a");
  if (link) link.focus();
  else if (!button.hidden) button.focus();
});

// On a narrow screen (one column: play.css's 900 px), a player who has matches finds
// them first, above the forms to create one ("Your turn" at a glance); on a wide screen,
// and with no match, the list stays after the forms and the open tables.
const mineSection = $("my-list").closest("section");
const footer = root.querySelector(".footer-links");
const narrow = window.matchMedia("(max-width: 899px)");

function placeMine() {
  const first = narrow.matches && $("my-list").querySelector("li[data-match]") !== null;
  const error = $("lobby-error");
  if (first && error.nextElementSibling !== mineSection) root.insertBefore(mineSection, error.nextSibling);
  else if (!first && mineSection.nextElementSibling !== footer) root.insertBefore(mineSection, footer);
  root.classList.toggle("mine-first", first);
}
narrow.addEventListener("change", placeMine);

// --- keeping the lists current -------------------------------------------------------------
//
// My matches follow the account stream (GET /api/v1/stream, Server-Sent Events): its
// first event, ``account``, lists the matches being played or waiting (invitations too),
// and each change that concerns the account follows; the list is read again when they
// change. Without a stream (no route, no EventSource, a stream that fails or never opens)
// the list is read every MINE_EVERY_MS instead. Other people's open tables are on no
// account's stream: that list is read every OPEN_EVERY_MS. Nothing is read while the page
// is hidden; both are read when it shows again.
const OPEN_EVERY_MS = 20000;
const MINE_EVERY_MS = 15000;
const OPEN_WAIT_MS = 10000; // a stream that has not opened by then is given up
let mineTimer = null;
let lastAccount = null;

function pollMine() {
  if (mineTimer) return;
  mineTimer = setInterval(() => { if (!document.hidden) loadMine(); }, MINE_EVERY_MS);
}

function listen(url) {
  let opened = false;
  const source = new EventSource(url, { withCredentials: true });
  const giveUp = () => {
    source.close();
    pollMine();
  };
  const watchdog = setTimeout(() => { if (!opened) giveUp(); }, OPEN_WAIT_MS);
  source.onopen = () => { opened = true; clearTimeout(watchdog); };
  source.onerror = () => {
    // Before it ever opened (no stream here) or closed for good: read the list instead.
    // An open stream that breaks reconnects by itself, with a fresh ``account`` event.
    if (!opened || source.readyState === EventSource.CLOSED) {
      clearTimeout(watchdog);
      giveUp();
    }
  };
  source.addEventListener("account", (event) => {
    let data = null;
    try { data = JSON.parse(event.data); } catch (e) { data = null; }
    const matches = data && Array.isArray(data.matches) ? data.matches : null;
    const key = matches ? JSON.stringify(matches.slice().sort((a, b) => String(a.match).localeCompare(String(b.match)))) : null;
    if (key !== null && key === lastAccount) return; // a reconnection: nothing new
    lastAccount = key;
    loadMine(); // drawn again only if the list changed
  });
  ["invitation_received", "match_started", "your_turn", "match_finished", "rating_changed"].forEach((name) =>
    source.addEventListener(name, () => loadMine())
  );
  source.onmessage = () => loadMine();
}

loadOpen();
loadMine();
setInterval(() => { if (!document.hidden) loadOpen(); }, OPEN_EVERY_MS);
document.addEventListener("visibilitychange", () => {
  if (document.hidden) return;
  loadOpen();
  loadMine();
});
if (root.dataset.stream && typeof EventSource === "function") listen(root.dataset.stream);
else pollMine();
