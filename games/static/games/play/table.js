// The table, /play/{match id}/: reads the match through GET /api/v1/matches/{id}, plays
// through POST .../moves, resigns through POST .../resign, and keeps fresh through
// live.js (the stream when there is one, else polling with the ETag).
import { api, T, fmt, errorText, newKey, timeControlText } from "./api.js";
import { cardImage, cardButton, cardName } from "./cards.js";
import { MatchFeed } from "./live.js";

const root = document.getElementById("play");
const $ = (id) => document.getElementById(id);
const RECORD_TIMEOUT_MS = 5000; // how long a deal's end waits for the deal's record

let detail = null; // the latest match detail
let shownDeal = null; // the id of the deal the table shows
let seenOverDeals = new Set(); // deals whose end was already shown (or was over at load)
let pending = null; // {card, ply} of a move on its way
let focusIndex = 0;
let toastTimer = null;

const feed = new MatchFeed({
  url: root.dataset.api,
  streamUrl: root.dataset.stream,
  heartbeatSeconds: Number(root.dataset.heartbeat) || 15,
  onDetail: (data) => show(data),
  onError: (error) => {
    if (error.code === "match_not_found" || error.code === "match_private") fatal(error);
    else toast(errorText(error));
  },
});

function toast(text) {
  const el = $("toast");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 4000);
}

function fatal(error) {
  feed.stop();
  root.dataset.state = "error";
  $("turn").textContent = errorText(error);
}

// --- who sits where ----------------------------------------------------------------------

function mySeat() {
  return detail.your_seat;
}

function bottomSeat() {
  return detail.your_seat === null ? 0 : detail.your_seat;
}

// Relative place of a seat: play goes to the right (counterclockwise seen from above).
function place(seat) {
  const n = detail.players;
  const d = (seat - bottomSeat() + n) % n;
  return n === 2 ? ["bottom", "top"][d] : ["bottom", "right", "top", "left"][d];
}

function myTeam() {
  return bottomSeat() % 2;
}

function seatName(seat) {
  const s = detail.seats[seat];
  if (!s || !s.user) return T.open_seat;
  return s.user;
}

function role(seat) {
  if (seat === mySeat()) return T.you;
  if (detail.players === 4 && seat % 2 === myTeam()) return T.partner;
  return T.opponent;
}

// --- drawing -----------------------------------------------------------------------------

function seatBadge(seat, deal) {
  const el = document.createElement("div");
  const team = seat % 2 === myTeam() ? "us" : "them";
  el.className = "seat-badge " + team + (deal && deal.turn === seat ? " turn" : "");
  el.dataset.seat = seat;
  const name = document.createElement("span");
  name.className = "name";
  name.textContent = seatName(seat);
  name.title = seatName(seat);
  const tags = document.createElement("span");
  tags.className = "tags";
  const words = [role(seat)];
  if (detail.seats[seat] && detail.seats[seat].is_bot) words.push(T.bot);
  if (deal && deal.dealer === seat) words.push(T.dealer);
  tags.textContent = words.join(" · ");
  el.append(name, tags);
  if (deal && seat !== mySeat()) {
    const backs = document.createElement("span");
    backs.className = "backs";
    const count = deal.hand_sizes[seat];
    const shown = deal.partner_hand && seat === (mySeat() + 2) % 4 ? deal.partner_hand : null;
    if (shown) {
      // The partners' last hand (RULES.md, on by default): the partner's cards face up.
      backs.setAttribute("role", "group");
      backs.setAttribute("aria-label", T.partner);
      shown.forEach((c) => backs.appendChild(cardImage(c, "mini")));
    } else {
      backs.setAttribute("role", "img");
      backs.setAttribute("aria-label", fmt(T.cards_in_hand, { n: count }));
      for (let i = 0; i < count; i++) backs.appendChild(cardImage(null, "tiny"));
    }
    el.appendChild(backs);
  }
  if (deal && deal.turn === seat) {
    const arrow = document.createElement("span");
    arrow.className = "turn-mark";
    arrow.textContent = T.to_play;
    el.appendChild(arrow);
  }
  return el;
}

function drawSeats(deal) {
  ["top", "left", "right"].forEach((p) => $("pos-" + p).replaceChildren());
  $("me-row").replaceChildren();
  for (let s = 0; s < detail.players; s++) {
    const where = place(s);
    const badge = seatBadge(s, deal);
    if (where === "bottom") $("me-row").appendChild(badge);
    else $("pos-" + where).appendChild(badge);
  }
}

function lastTrick(deal) {
  return deal && deal.tricks.length ? deal.tricks[deal.tricks.length - 1] : null;
}

function drawTrick(deal) {
  ["top", "left", "right", "bottom"].forEach((p) => $("slot-" + p).replaceChildren());
  const caption = $("trick-caption");
  caption.textContent = "";
  if (!deal) return;
  let cards = deal.table.map((t) => ({ seat: t.seat, card: t.card }));
  let done = null;
  if (pending && !cards.some((c) => c.card === pending.card)) {
    cards = cards.concat([{ seat: mySeat(), card: pending.card }]);
  }
  if (!cards.length && lastTrick(deal)) {
    // The trick just taken stays in view, faded, until the next card is led.
    done = lastTrick(deal);
    cards = done.cards.map((c, i) => ({ seat: done.seats[i], card: c }));
  }
  cards.forEach((t) => {
    const el = cardImage(t.card, done ? "taken" + (t.seat === done.winner ? " winner" : "") : "");
    el.setAttribute("aria-label", fmt(T.played_by, { card: cardName(t.card), name: seatName(t.seat) }));
    $("slot-" + place(t.seat)).appendChild(el);
  });
  if (done) caption.textContent = fmt(T.trick_won_by, { name: seatName(done.winner), points: done.points });
}

function drawStock(deal) {
  const briscola = $("briscola");
  briscola.replaceChildren();
  if (!deal) return;
  if (deal.briscola_on_table) {
    const el = cardImage(deal.briscola, "trump");
    el.setAttribute("aria-label", T.briscola + ": " + cardName(deal.briscola));
    briscola.appendChild(el);
  } else {
    const gone = document.createElement("span");
    gone.className = "gone";
    gone.textContent = deal.briscola_holder !== null
      ? fmt(T.briscola_held, { card: cardName(deal.briscola), name: seatName(deal.briscola_holder) })
      : fmt(T.briscola_gone, { card: cardName(deal.briscola) });
    briscola.appendChild(gone);
  }
  $("stock-count").textContent = deal.stock_count;
  $("pile").classList.toggle("empty", deal.stock_count === 0);
  $("pile").setAttribute("role", "img");
  $("pile").setAttribute("aria-label", fmt(T.stock, { n: deal.stock_count }));
  // Points so far: RULES.md lets every seat know each team's captured points.
  const points = [0, 0];
  deal.tricks.forEach((t) => { points[t.winner % 2] += t.points; });
  $("points-us").textContent = points[myTeam()];
  $("points-them").textContent = points[1 - myTeam()];
}

function myTurn() {
  const deal = detail && detail.current_deal;
  return !!(deal && detail.status === "active" && !deal.over && mySeat() !== null && deal.turn === mySeat() && !pending);
}

function drawHand(deal) {
  const hand = $("hand");
  const had = hand.contains(document.activeElement);
  hand.replaceChildren();
  if (!deal || mySeat() === null) return;
  const playable = myTurn();
  const cards = deal.hand.filter((c) => !(pending && c === pending.card));
  cards.forEach((code, i) => {
    const button = cardButton(code);
    const legal = playable && deal.legal.includes(code);
    button.setAttribute("aria-disabled", legal ? "false" : "true");
    if (code[1] === deal.trump) button.classList.add("trump");
    button.tabIndex = i === Math.min(focusIndex, cards.length - 1) ? 0 : -1;
    const key = document.createElement("span");
    key.className = "key";
    key.setAttribute("aria-hidden", "true");
    key.textContent = String(i + 1);
    button.appendChild(key);
    button.addEventListener("click", () => play(code));
    button.addEventListener("focus", () => { focusIndex = i; });
    hand.appendChild(button);
  });
  if (had && cards.length) hand.children[Math.min(focusIndex, cards.length - 1)].focus();
}

function drawStatus() {
  const us = myTeam();
  $("score-us").textContent = detail.deals_won[us];
  $("score-them").textContent = detail.deals_won[1 - us];
  $("match-title").textContent = fmt(T.match_of, { format: T.formats[detail.format] || detail.format, players: detail.players });
  const deal = detail.current_deal;
  let text = "";
  if (detail.status === "waiting") text = T.waiting;
  else if (detail.status === "finished" || detail.status === "aborted") text = T.status[detail.status];
  else if (deal && deal.turn !== null && deal.turn !== undefined) {
    text = deal.turn === mySeat() ? T.your_turn : fmt(T.their_turn, { name: seatName(deal.turn) });
  }
  if ($("turn").textContent !== text) $("turn").textContent = text;
  $("resign").hidden = !(detail.status === "active" && mySeat() !== null);
  const link = $("replay-link");
  if (deal) {
    link.hidden = false;
    link.href = root.dataset.replay + deal.id + "/" + (deal.over || mySeat() === null ? "" : "?seat=" + mySeat());
  }
  drawClock();
}

// The clock, for a match with a time control only: an untimed match's deadline is its idle
// expiry (MATCH_IDLE_HOURS), no clock to play against. Live play (seconds a move) counts
// down the seat to play's seconds_left from when the detail arrived (not from this
// computer's clock, which may be off); correspondence (hours a move) says the time to
// play by.
let clockBase = null; // {left, at, deadline} of the latest detail with a body

function clockSeen(data) {
  clockBase = data.seconds_left === null || data.seconds_left === undefined
    ? null
    : { left: data.seconds_left, at: performance.now(), deadline: data.deadline };
}

function drawClock() {
  const clock = $("clock");
  const control = detail.time_control;
  if (!control) { clock.hidden = true; return; }
  clock.hidden = false;
  $("clock-rule").textContent = timeControlText(detail, true);
  const time = $("clock-time");
  let text = "";
  let low = false;
  if (detail.status === "active" && clockBase) {
    const left = Math.max(0, Math.ceil(clockBase.left - (performance.now() - clockBase.at) / 1000));
    if (control.per_move_seconds) {
      text = T.time_left + " " + Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0");
      low = left <= 10;
    } else {
      const by = new Date(Date.now() + left * 1000);
      const when = new Intl.DateTimeFormat(document.documentElement.lang || undefined, {
        weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit",
      }).format(by);
      text = T.deadline + " " + when;
    }
  }
  if (time.textContent !== text) time.textContent = text;
  clock.classList.toggle("low", low);
}
setInterval(() => { if (detail) drawClock(); }, 1000);

function draw() {
  const deal = detail.current_deal;
  root.dataset.players = detail.players;
  root.classList.toggle("players-4", detail.players === 4);
  root.classList.toggle("players-2", detail.players === 2);
  drawStatus();
  drawSeats(deal);
  drawTrick(deal);
  drawStock(deal);
  drawHand(deal);
  root.dataset.ply = deal ? deal.ply : "";
  root.dataset.deal = deal ? deal.number : "";
  root.dataset.myTurn = myTurn() ? "1" : "0";
  root.dataset.status = detail.status;
  feed.setPace(myTurn() ? 3000 : 1000);
  if (detail.status === "finished" || detail.status === "aborted") feed.stop();
}

// --- the flow of a match -----------------------------------------------------------------

// How far into the match a detail is: deals and their plies only go forward.
function behind(data, than) {
  const [a, b] = [data.current_deal, than.current_deal];
  if (!a || !b) return false;
  return a.number < b.number || (a.number === b.number && a.ply < b.ply);
}

function show(data) {
  // A move's answer can arrive after the stream's event of the bot's reply to it: that
  // older detail must not hide the reply (the page would wait for a turn it was given).
  if (detail !== null && behind(data, detail)) {
    draw();
    return;
  }
  const first = detail === null;
  detail = data;
  clockSeen(data);
  if (first) {
    // Deals over before this page opened are not announced again.
    data.deals.forEach((d) => { if (d.status !== "active") seenOverDeals.add(d.id); });
    if (data.status === "finished" && data.current_deal) seenOverDeals.delete(data.current_deal.id);
  }
  const deal = data.current_deal;
  shownDeal = deal ? deal.id : null;
  // While a deal's end is announced, the state says so until the dialog is closed.
  if (!["ending", "deal-over", "match-over"].includes(root.dataset.state)) {
    root.dataset.state = data.status === "active" || data.status === "waiting" ? "playing" : "over";
  }
  draw();
  const ended = data.deals.filter((d) => d.status !== "active" && !seenOverDeals.has(d.id));
  if (ended.length) {
    const last = ended[ended.length - 1];
    ended.forEach((d) => seenOverDeals.add(d.id));
    dealEnded(last);
  } else if (first && data.status !== "active" && data.status !== "waiting") {
    matchOverOnly();
  }
}

async function dealEnded(summary) {
  const dialog = $("end-dialog");
  const matchOver = detail.status !== "active";
  root.dataset.state = "ending";
  $("end-title").textContent = matchOver ? T.match_over_title : fmt(T.deal_over, { n: summary.number });
  const us = myTeam();
  let result;
  if (summary.status === "abandoned" || detail.end_reason === "resigned") result = T.resigned;
  else if (summary.winner === null) result = T.deal_drawn;
  else if (detail.players === 2 && mySeat() !== null) {
    result = summary.winner === us ? T.deal_won_1v1 : fmt(T.deal_lost_1v1, { name: seatName(1 - us) });
  } else result = summary.winner === us ? T.deal_won : T.deal_lost;
  if (matchOver && detail.winner !== null && mySeat() !== null) {
    result += ". " + (detail.winner === us ? T.match_won : T.match_lost);
  }
  $("end-result").textContent = result;
  $("end-replay").href = root.dataset.replay + summary.id + "/";
  $("next-deal").hidden = matchOver;
  $("rematch").hidden = !matchOver || mySeat() === null;
  $("to-lobby").hidden = !matchOver;
  const sides = $("end-sides");
  sides.replaceChildren();
  const taken = [[], []];
  try {
    // The dialog waits for the cards taken, but not long: the points need no record.
    const record = (await api(root.dataset.deals + summary.id, { timeoutMs: RECORD_TIMEOUT_MS })).data;
    record.tricks.forEach((t) => { taken[t.winner % 2].push(...t.cards); });
  } catch (error) {
    // The points still show; the cards need the record.
  }
  [us, 1 - us].forEach((team) => {
    const side = document.createElement("section");
    side.className = "side " + (team === us ? "us" : "them");
    // Two players: "You" and the other's name; four: the two teams.
    const oneOnOne = detail.players === 2 && mySeat() !== null;
    const label = oneOnOne ? (team === us ? T.you_side : seatName(1 - us)) : (team === us ? T.your_team : T.their_team);
    const h = document.createElement("h3");
    const points = summary.points ? summary.points[team] : "–";
    h.textContent = fmt(T.points_of, { side: label, points });
    side.dataset.points = points;
    const cards = document.createElement("div");
    cards.className = "taken-cards";
    cards.setAttribute("role", "group");
    cards.setAttribute("aria-label", fmt(T.cards_taken, { side: label }));
    taken[team].forEach((c) => cards.appendChild(cardImage(c, "mini")));
    side.append(h, cards);
    sides.appendChild(side);
  });
  if (!dialog.open) dialog.showModal();
  root.dataset.state = matchOver ? "match-over" : "deal-over";
  (matchOver ? ($("rematch").hidden ? $("to-lobby") : $("rematch")) : $("next-deal")).focus();
}

function matchOverOnly() {
  const deal = detail.current_deal;
  if (deal) dealEnded({ id: deal.id, number: deal.number, status: deal.status, points: deal.points, winner: deal.winner });
}

async function play(code) {
  if (!myTurn()) return;
  const deal = detail.current_deal;
  if (!deal.legal.includes(code)) return;
  pending = { card: code, ply: deal.ply };
  draw(); // the card is on the table at once; only the move's own request follows
  try {
    const answer = await api(root.dataset.api + "/moves", { method: "POST", body: { card: code, ply: deal.ply }, key: newKey() });
    pending = null;
    feed.seen(answer.data, answer.etag);
    show(answer.data);
    // The answer is the match as this move left it; a bot's reply follows at once.
    if (!myTurn()) feed.soon(150);
  } catch (error) {
    pending = null;
    toast(errorText(error));
    draw();
    feed.refresh();
  }
}

$("next-deal").addEventListener("click", () => {
  $("end-dialog").close();
});
$("end-dialog").addEventListener("close", () => {
  root.dataset.state = detail.status === "active" ? "playing" : "over";
  const first = $("hand").querySelector("button");
  if (first) first.focus();
});

$("rematch").addEventListener("click", async () => {
  // The API's rematch: the same table and settings, seats rotated by one; the other
  // people are invited, and their own Rematch (the same call) accepts it.
  try {
    const answer = await api(root.dataset.api + "/rematch", { method: "POST" });
    location.assign(root.dataset.lobby + answer.data.id + "/");
  } catch (error) {
    toast(errorText(error));
  }
});

$("resign").addEventListener("click", async () => {
  if (!window.confirm(T.resign_confirm)) return;
  try {
    const answer = await api(root.dataset.api + "/resign", { method: "POST" });
    feed.seen(answer.data, answer.etag);
    show(answer.data);
  } catch (error) {
    toast(errorText(error));
  }
});

$("show-last").addEventListener("click", () => {
  const deal = detail && detail.current_deal;
  const trick = lastTrick(deal);
  const cards = $("last-cards");
  cards.replaceChildren();
  if (trick) {
    trick.cards.forEach((c, i) => {
      const el = cardImage(c, trick.seats[i] === trick.winner ? "winner" : "");
      el.setAttribute("aria-label", fmt(T.played_by, { card: cardName(c), name: seatName(trick.seats[i]) }));
      cards.appendChild(el);
    });
    $("last-caption").textContent = fmt(T.trick_won_by, { name: seatName(trick.winner), points: trick.points });
  } else {
    $("last-caption").textContent = T.no_trick_yet;
  }
  $("last-dialog").showModal();
});

// Keyboard: arrows or 1-3 (1-3 in 4-player too) choose a card, Enter plays it.
document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  if (event.target instanceof HTMLInputElement || document.querySelector("dialog[open]")) return;
  const buttons = Array.from($("hand").querySelectorAll("button"));
  if (!buttons.length) return;
  let index = null;
  const current = buttons.indexOf(document.activeElement);
  if (/^[1-9]$/.test(event.key) && Number(event.key) <= buttons.length) index = Number(event.key) - 1;
  else if (event.key === "ArrowRight" || event.key === "ArrowDown") index = current < 0 ? 0 : (current + 1) % buttons.length;
  else if (event.key === "ArrowLeft" || event.key === "ArrowUp") index = current < 0 ? buttons.length - 1 : (current - 1 + buttons.length) % buttons.length;
  if (index === null) return;
  event.preventDefault();
  buttons.forEach((b, i) => { b.tabIndex = i === index ? 0 : -1; });
  focusIndex = index;
  buttons[index].focus();
});

api(root.dataset.api)
  .then((answer) => {
    feed.seen(answer.data, answer.etag);
    show(answer.data);
    if (detail.status === "active" || detail.status === "waiting") feed.start();
  })
  .catch(fatal);
