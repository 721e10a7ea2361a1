// The lobby, /play/: creates matches (POST /api/v1/matches), lists open tables
// (GET /api/v1/matches?open=true) and my matches (?mine=true), joins (POST .../join).
import { api, T, fmt, errorText, newKey, timeControlText } from "./api.js";

const root = document.getElementById("lobby");
const me = root.dataset.me;
const $ = (id) => document.getElementById(id);
const tableUrl = (id) => location.pathname.replace(/\/?$/, "/") + id + "/";

// An error is said where it happened (``near``: a form's own error line, else the page's)
// and brought into view with the focus: on a phone the page's line is screens away.
function showError(error, near, body) {
  const el = (near && near.querySelector(".form-error")) || $("lobby-error");
  document.querySelectorAll(".lobby .error").forEach((other) => { if (other !== el) other.hidden = true; });
  el.textContent = createErrorText(error, body) || (errorText(error) + (error.details && Object.keys(error.details).length ? " " + detailText(error.details) : ""));
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
});

$("vs-bot").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const players = Number(chosen(form, "players"));
  const level = chosen(form, "level");
  const seats = [];
  for (let i = 1; i < players; i++) seats.push({ bot: level });
  create({ players, format: chosen(form, "format"), seats, ...timeControl(form) }, $("play-bot"));
});

$("vs-people").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const players = Number(chosen(form, "players"));
  const names = $("invite").value.split(",").map((s) => s.trim()).filter(Boolean);
  const seats = [];
  for (let i = 1; i < players; i++) seats.push(names[i - 1] ? { user: names[i - 1] } : "open");
  create({ players, format: chosen(form, "format"), seats, ...timeControl(form) }, $("open-table"));
});

// The others at the table by name (an invited person not there yet: "(waiting)"); open
// seats are not people: a table with nobody else yet says it waits for players.
function opponents(match) {
  const names = match.seats
    .filter((s) => s.user && s.user !== me)
    .map((s) => s.user + (s.joined ? "" : " (" + T.status.waiting + ")"));
  return names.length ? T.vs + " " + names.join(", ") : T.waiting;
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

async function loadOpen() {
  const list = $("open-list");
  try {
    const answer = await api(root.dataset.api + "?open=true&status=waiting");
    list.replaceChildren();
    const rows = answer.data.results.filter((m) => !m.seats.some((s) => s.user === me && s.joined));
    rows.forEach((match) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "primary";
      button.textContent = T.join;
      button.setAttribute("aria-label", T.join + ": " + opponents(match));
      button.addEventListener("click", async () => {
        button.disabled = true;
        try {
          await api(root.dataset.api + "/" + match.id + "/join", { method: "POST", body: {} });
          location.assign(tableUrl(match.id));
        } catch (error) {
          showError(error);
          button.disabled = false;
        }
      });
      list.appendChild(item(match, button));
    });
    if (!rows.length) empty(list);
  } catch (error) {
    showError(error);
  }
  list.setAttribute("aria-busy", "false");
}

// My matches, newest first; for those being played, whose turn it is (the match's detail).
async function loadMine() {
  const list = $("my-list");
  try {
    const answer = await api(root.dataset.api + "?mine=true");
    list.replaceChildren();
    const matches = answer.data.results;
    matches.forEach((match) => {
      const turn = document.createElement("span");
      turn.className = "whose-turn";
      const li = item(match, turn);
      if (match.status === "finished" && match.winner !== null) {
        const mine = match.seats.find((s) => s.user === me);
        turn.textContent = mine ? (mine.team === match.winner ? T.won : T.lost) : "";
      }
      list.appendChild(li);
    });
    if (!matches.length) empty(list);
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
    showError(error);
  }
  list.setAttribute("aria-busy", "false");
}

loadOpen();
loadMine();
