// The table, /play/{match id}/: reads the match through GET /api/v1/matches/{id}, plays
// through POST .../moves, resigns through POST .../resign, and keeps fresh through
// live.js (the stream when there is one, else polling with the ETag).
import { api, T, fmt, errorText, newKey, timeControlText } from "./api.js";
import { cardImage, cardButton, cardName } from "./cards.js";
import { MatchFeed } from "./live.js";

const root = document.getElementById("play");
const $ = (id) => document.getElementById(id);
const RECORD_TIMEOUT_MS = 5000; // how long a deal's end waits for the deal's record
// How long a trick just taken stays in view, its winner marked, when the next card is led
// at once (a bot that wins a trick leads the next one straight away), unless the person
// plays first; and how long a deal's last trick shows before the deal's end covers it
// (the server's PLAY_TRICK_HOLD_SECONDS, 1.5 s unless set otherwise).
const HOLD_MS = root.dataset.trickHoldMs && Number.isFinite(Number(root.dataset.trickHoldMs))
  ? Math.max(0, Number(root.dataset.trickHoldMs))
  : 1500;

let detail = null; // the latest match detail
let shownDeal = null; // the id of the deal the table shows
let seenOverDeals = new Set(); // deals whose end was already shown (or was over at load)
let pending = null; // {card, ply, deal} of a move on its way
// The trick last taken, since when it is in view: {key, trick, since, released}; a newer
// detail's next lead waits until it was in view HOLD_MS (or the person played).
let inView = null;
let holdTimer = null;
// The trick held in view while cards of the next trick wait to be drawn (null: none): the
// person's hand is not playable then, so no card is played before the cards led are seen.
let held = null;
// While a deal's end is announced and the match has gone on to the next deal: the finished
// deal as last seen (then with its last trick, from the deal's record), drawn instead.
let frozen = null;
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

// Writes ``text`` into ``el`` only if it is not there already: a live region (or a screen
// reader watching the page) is not told the same words again.
function setText(el, text) {
  const value = String(text);
  if (el.textContent !== value) el.textContent = value;
}

function toast(text) {
  const el = $("toast");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 4000);
}

// A match this page cannot show (gone, or private to its players): the reason and the way
// back to the lobby, and no empty table (its "you 0" score was nobody's: play.css).
function fatal(error) {
  feed.stop();
  root.dataset.state = "error";
  $("turn").textContent = errorText(error);
  $("table-lobby").hidden = false;
}

// --- who sits where ----------------------------------------------------------------------

function mySeat() {
  return detail.your_seat;
}

// The seat kept for the viewer in a match still waiting for them (an invitation not yet
// answered), else null.
function invitedSeat() {
  if (detail.your_seat !== null || detail.status !== "waiting") return null;
  const seat = detail.seats.find((s) => s.user === root.dataset.me && !s.joined);
  return seat ? seat.seat : null;
}

// The viewer's seat, joined or not (an invitation pending, or declined), else null.
function ownSeat() {
  if (detail.your_seat !== null) return detail.your_seat;
  const seat = detail.seats.find((s) => s.user === root.dataset.me);
  return seat ? seat.seat : null;
}

// The seat drawn at the bottom: the viewer's own (or the one they are invited to).
function bottomSeat() {
  const own = ownSeat();
  return own === null ? 0 : own;
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
  if (seat === ownSeat()) return T.you;
  if (detail.players === 4 && seat % 2 === myTeam()) return T.partner;
  return T.opponent;
}

// --- drawing -----------------------------------------------------------------------------

// The seat to play in what the table shows: while a trick taken is held in view (its
// winner's next lead, or more, waiting to be drawn), its winner, who leads next.
function shownTurn(deal) {
  if (!deal) return null;
  return held ? held.winner : deal.turn;
}

function seatBadge(seat, deal) {
  const el = document.createElement("div");
  const team = seat % 2 === myTeam() ? "us" : "them";
  const toPlay = deal && shownTurn(deal) === seat;
  el.className = "seat-badge " + team + (toPlay ? " turn" : "");
  el.dataset.seat = seat;
  const name = document.createElement("span");
  name.className = "name";
  name.textContent = seatName(seat);
  name.title = seatName(seat);
  const tags = document.createElement("span");
  tags.className = "tags";
  const words = [role(seat)];
  if (detail.seats[seat] && detail.seats[seat].is_bot) words.push(T.bot);
  // A person the timeout bot played for (away), or whose seat it holds.
  const s = detail.seats[seat];
  if (s && seat !== ownSeat() && detail.status === "active" && (s.bot_holds || s.away)) words.push(s.bot_holds ? T.bot_holds_tag : T.away_tag);
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
  if (toPlay) {
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

// The cards on the table (with the card on its way), and whether the trick just taken
// holds them back: {cards, held} (held: the trick taken, still shown for HOLD_MS).
function trickState(deal) {
  clearTimeout(holdTimer);
  if (!deal) return { cards: [], held: null };
  const last = lastTrick(deal);
  const now = performance.now();
  if (last) {
    const key = deal.id + ":" + deal.tricks.length;
    if (!inView || inView.key !== key) inView = { key, trick: last, since: now, released: false };
  }
  let cards = deal.table.map((t) => ({ seat: t.seat, card: t.card }));
  // The card on its way, until a detail that has it (or has gone past it) arrives.
  if (pending && pending.deal === deal.id && pending.ply === deal.ply) {
    cards = cards.concat([{ seat: mySeat(), card: pending.card }]);
  }
  const shownFor = last ? now - inView.since : Infinity;
  if (cards.length && last && !inView.released && shownFor < HOLD_MS) {
    // The next lead came at once: the trick just taken first, the new lead after (the hand
    // waits for it: see myTurn).
    holdTimer = setTimeout(() => { if (detail) draw(); }, HOLD_MS - shownFor + 10);
    return { cards, held: inView.trick };
  }
  return { cards, held: null };
}

// The cards of the trick being played, or of the trick just taken (faded, its winner
// marked): never cards of two tricks at once.
function drawTrick(deal) {
  ["top", "left", "right", "bottom"].forEach((p) => $("slot-" + p).replaceChildren());
  const caption = $("trick-caption");
  caption.textContent = "";
  root.dataset.held = held ? "1" : "0";
  if (!deal) return;
  const last = lastTrick(deal);
  let cards = trickCards;
  let done = null;
  if (held) {
    done = held;
  } else if (!cards.length && last) {
    // The trick just taken stays in view, faded, until the next card is led.
    done = last;
  }
  if (done) cards = done.cards.map((c, i) => ({ seat: done.seats[i], card: c }));
  cards.forEach((t) => {
    const el = cardImage(t.card, done ? "taken" + (t.seat === done.winner ? " winner" : "") : "");
    el.setAttribute("aria-label", fmt(T.played_by, { card: cardName(t.card), name: seatName(t.seat) }));
    $("slot-" + place(t.seat)).appendChild(el);
  });
  if (done) caption.textContent = fmt(T.trick_won_by, { name: seatName(done.winner), points: done.points });
}

// Screen readers hear, politely, each card the others play and who takes each trick
// (#trick-news, a live region): what the eyes see on the felt.
let told = null; // {deal, ply}: what the live region has told up to

function playedCards(deal) {
  const cards = [];
  deal.tricks.forEach((t) => t.cards.forEach((c, i) => cards.push({ seat: t.seats[i], card: c, trick: t, last: i === t.cards.length - 1 })));
  deal.table.forEach((t) => cards.push({ seat: t.seat, card: t.card }));
  return cards;
}

function tell(deal) {
  if (!deal || frozen) return;
  const cards = playedCards(deal);
  if (!told || told.deal !== deal.id || told.ply > cards.length) {
    // A page just opened (or a new deal): nothing to catch up on, from here on.
    const fresh = !told;
    told = { deal: deal.id, ply: fresh ? cards.length : 0 };
    if (fresh) return;
  }
  const news = [];
  cards.slice(told.ply).forEach((c) => {
    if (c.seat !== mySeat()) news.push(fmt(T.played_by, { card: cardName(c.card), name: seatName(c.seat) }));
    if (c.last) news.push(fmt(T.trick_won_by, { name: seatName(c.trick.winner), points: c.trick.points }));
  });
  told.ply = cards.length;
  if (news.length) $("trick-news").textContent = news.join(". ") + ".";
}

function drawStock(deal) {
  const briscola = $("briscola");
  briscola.replaceChildren();
  // No deal yet (a table waiting for players): no stock to count, no points to add up.
  $("stock").classList.toggle("no-deal", !deal);
  $("points").classList.toggle("no-deal", !deal);
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
  const points = pointsSoFar(deal);
  setText($("points-us"), points[0]);
  setText($("points-them"), points[1]);
}

// Points so far, the viewer's side first: RULES.md lets every seat know each team's
// captured points.
function pointsSoFar(deal) {
  const points = [0, 0];
  if (deal) deal.tricks.forEach((t) => { points[t.winner % 2] += t.points; });
  return [points[myTeam()], points[1 - myTeam()]];
}

// Screen readers hear the score as a sentence (#score-news, a polite live region), and only
// when it changed: the points so far after a trick that changed them, the deals won after
// a deal ("Points so far: you 13, bob 0."). The numbers shown are plain text.
let scoreTold = null; // {deal, points, won}: the score as last told (or seen at load)

// The two sides as the score's sentence names them, the viewer's first.
function sideNames() {
  if (detail.players === 2) {
    return [ownSeat() !== null ? T.you : seatName(bottomSeat()), seatName(1 - bottomSeat())];
  }
  if (ownSeat() !== null) return [T.your_team_lower, T.their_team_lower];
  return [fmt(T.team, { n: myTeam() + 1 }), fmt(T.team, { n: 2 - myTeam() })];
}

function tellScore(deal) {
  const points = pointsSoFar(deal);
  const us = myTeam();
  const won = [detail.deals_won[us], detail.deals_won[1 - us]];
  const now = { deal: deal ? deal.id : null, points: points.join(" "), won: won.join(" ") };
  const before = scoreTold;
  scoreTold = now;
  if (!before) return; // a page just opened: nothing to catch up on
  const [mine, theirs] = sideNames();
  const news = [];
  if (now.won !== before.won) {
    news.push(fmt(T.score_news_deals, { us_name: mine, us: won[0], them_name: theirs, them: won[1] }));
  }
  // A new deal's points start again from 0: nothing to tell.
  if (deal && now.deal === before.deal && now.points !== before.points) {
    news.push(fmt(T.score_news_points, { us_name: mine, us: points[0], them_name: theirs, them: points[1] }));
  }
  if (news.length) setText($("score-news"), news.join(" "));
}

function myTurn() {
  const deal = detail && detail.current_deal;
  return !!(deal && !frozen && !held && detail.status === "active" && !deal.over && mySeat() !== null && deal.turn === mySeat() && !pending && !botPlaysForMe());
}

// The timeout bot plays the viewer's seat: it holds the seat (after timeouts in a row), or
// the viewer's time ran out on this turn (the turn is the bot's: no deadline any more).
function botPlaysForMe() {
  const deal = detail && detail.current_deal;
  const seat = mySeat() === null ? null : detail.seats[mySeat()];
  if (!seat || detail.status !== "active" || !deal || deal.over) return false;
  if (seat.bot_holds) return true;
  return !!(detail.time_control && deal.turn === mySeat() && !detail.deadline);
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
    if (code[1] === deal.trump) {
      // The gold corner says it to the eye; the name says it to a screen reader.
      button.classList.add("trump");
      button.querySelector(".visually-hidden").textContent = fmt(T.trump_card, { card: cardName(code) });
    }
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

// The viewer's seat left to the timeout bot: what it did, and the way back.
function drawAway() {
  const seat = mySeat() === null ? null : detail.seats[mySeat()];
  const away = !!(seat && detail.status === "active" && (seat.away || seat.bot_holds));
  const note = $("away-note");
  const text = !away ? "" : seat.bot_holds ? T.bot_holds_your_seat : T.bot_played_for_you;
  if (note.textContent !== text) note.textContent = text;
  note.hidden = !away;
  $("away").hidden = !away;
  $("take-back").hidden = !away;
}

function drawStatus(deal) {
  const us = myTeam();
  setText($("score-us"), detail.deals_won[us]);
  setText($("score-them"), detail.deals_won[1 - us]);
  setText($("match-title"), fmt(T.match_of, { format: T.formats[detail.format] || detail.format, players: detail.players }));
  let text = "";
  if (frozen) text = fmt(T.deal_over, { n: frozen.number });
  else if (invitedSeat() !== null) text = fmt(T.invited_you, { name: detail.created_by });
  else if (detail.status === "waiting") text = T.waiting;
  else if (detail.status === "finished" || detail.status === "aborted") text = matchOverText();
  else if (pending && deal && pending.deal === deal.id) text = fmt(T.playing_card, { card: cardName(pending.card) });
  else if (deal && deal.turn === mySeat() && botPlaysForMe()) {
    text = detail.seats[mySeat()].bot_holds ? T.bot_plays_held_seat : T.bot_plays_your_card;
  }
  else if (held && deal && deal.turn === mySeat()) {
    // The cards led wait for the trick taken to be seen: the turn comes with them.
    text = fmt(T.trick_taken_then_turn, { name: seatName(held.winner) });
  } else if (deal && deal.turn !== null && deal.turn !== undefined) {
    text = deal.turn === mySeat() ? T.your_turn : fmt(T.their_turn, { name: seatName(deal.turn) });
  }
  if ($("turn").textContent !== text) $("turn").textContent = text;
  $("resign").hidden = !(detail.status === "active" && mySeat() !== null);
  drawAway();
  drawBotNote();
  // A table still waiting for players: the one who opened it may call it off; no deal
  // yet, so no last trick to show.
  $("cancel").hidden = !(detail.status === "waiting" && detail.created_by === root.dataset.me);
  $("show-last").hidden = !deal;
  // Once the match is over, its next steps stay on the table after the dialog is closed.
  const over = detail.status === "finished" || detail.status === "aborted";
  $("table-rematch").hidden = !rematchable();
  $("table-lobby").hidden = !over;
  lobbyFirst($("table-lobby"));
  const invited = invitedSeat() !== null;
  $("join").hidden = !invited;
  $("decline").hidden = !invited;
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
// The seconds left are counted down from the deadline itself when this computer's clock
// agrees with the server's seconds_left (rounded up by the server), else from when the
// detail arrived; shown rounded down, and redrawn often, so the clock never shows more
// time than there is.
let clockBase = null; // {left, at}: seconds left at performance.now() "at"

function clockSeen(data) {
  if (data.seconds_left === null || data.seconds_left === undefined) {
    clockBase = null;
    return;
  }
  // Rounded up by the server: more than seconds_left - 1 is left, at most seconds_left.
  let left = Math.max(0, data.seconds_left - 1);
  const deadline = data.deadline ? Date.parse(data.deadline) : NaN;
  if (!Number.isNaN(deadline)) {
    const byDeadline = (deadline - Date.now()) / 1000;
    // seconds_left is the time left rounded up, as the server answered (a moment ago).
    if (byDeadline <= data.seconds_left && byDeadline > data.seconds_left - 3) left = byDeadline;
  }
  clockBase = { left, at: performance.now() };
}

// The first card of each person in the match has a window of its own (at least 30 s):
// running out of it calls the match off rather than losing it.
function firstCardTurn(deal) {
  if (!deal || deal.number !== 1 || deal.turn === null || deal.turn === undefined) return false;
  const seat = detail.seats[deal.turn];
  if (!seat || seat.is_bot) return false;
  return !playedSeats().has(deal.turn);
}

// The seats that have played a card in the match (every seat, after the first deal).
function playedSeats() {
  const deal = detail.current_deal;
  const seats = new Set();
  if (!deal) return seats;
  if (deal.number > 1) detail.seats.forEach((s) => seats.add(s.seat));
  deal.tricks.forEach((t) => t.seats.forEach((s) => seats.add(s)));
  deal.table.forEach((t) => seats.add(t.seat));
  return seats;
}

// Whether every person at the table has played a card: before that a resignation calls
// the match off (unrated, no winner) rather than losing it.
function everyonePlayed() {
  const played = playedSeats();
  return detail.seats.every((s) => !s.user || s.is_bot || played.has(s.seat));
}

function drawClock() {
  const clock = $("clock");
  const control = detail.time_control;
  // Once the match is over, no clock: its rule ("5 s per move, or the match is lost") is
  // one of a match still played, and the end's own line says how it ended.
  const over = detail.status === "finished" || detail.status === "aborted";
  if (!control || over) { clock.hidden = true; return; }
  clock.hidden = false;
  const deal = detail.current_deal;
  let rule = timeControlText(detail, true);
  if (detail.status === "active" && firstCardTurn(deal)) {
    rule = control.per_move_seconds
      ? fmt(T.first_card_seconds, { n: Math.max(control.per_move_seconds, 30) })
      : fmt(T.first_card_hours, { n: control.per_move_hours });
  }
  if ($("clock-rule").textContent !== rule) $("clock-rule").textContent = rule;
  const time = $("clock-time");
  let text = "";
  let low = false;
  if (detail.status === "active" && clockBase) {
    const left = Math.max(0, Math.floor(clockBase.left - (performance.now() - clockBase.at) / 1000));
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
setInterval(() => { if (detail) drawClock(); }, 200);

let trickCards = [];

function draw() {
  const deal = frozen || detail.current_deal;
  ({ cards: trickCards, held } = trickState(deal));
  root.dataset.players = detail.players;
  root.classList.toggle("players-4", detail.players === 4);
  root.classList.toggle("players-2", detail.players === 2);
  drawStatus(deal);
  drawSeats(deal);
  drawTrick(deal);
  tell(deal);
  drawStock(deal);
  tellScore(deal);
  drawHand(deal);
  root.dataset.ply = deal ? deal.ply : "";
  root.dataset.deal = deal ? deal.number : "";
  root.dataset.myTurn = myTurn() ? "1" : "0";
  root.dataset.status = detail.status;
  // Why it is not the viewer's turn, when it should be (the browser tests print the
  // dataset when a turn never comes): the deal's turn, a deadline, a card on its way.
  root.dataset.turn = deal && deal.turn !== null ? deal.turn : "";
  root.dataset.deadline = detail.deadline ? "1" : "0";
  root.dataset.pending = pending ? "1" : "0";
  root.dataset.frozen = frozen ? "1" : "0";
  feed.setPace(myTurn() ? 3000 : 1000);
  if (detail.status === "finished" || detail.status === "aborted") {
    feed.stop();
    watchRematch();
  }
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
  const before = first ? null : detail.current_deal; // the deal as the table showed it
  detail = data;
  clockSeen(data);
  if (first) {
    // Deals over before this page opened are not announced again.
    data.deals.forEach((d) => { if (d.status !== "active") seenOverDeals.add(d.id); });
    if (data.status === "finished" && data.current_deal) seenOverDeals.delete(data.current_deal.id);
    // Nor does the trick taken last before it opened hold back what follows.
    const deal = data.current_deal;
    if (deal && deal.tricks.length) {
      inView = { key: deal.id + ":" + deal.tricks.length, trick: lastTrick(deal), since: -Infinity, released: true };
    }
  }
  const deal = data.current_deal;
  shownDeal = deal ? deal.id : null;
  // While a deal's end is announced, the state says so until the dialog is closed.
  if (!["ending", "deal-over", "match-over"].includes(root.dataset.state)) {
    root.dataset.state = data.status === "active" || data.status === "waiting" ? "playing" : "over";
  }
  const ended = data.deals.filter((d) => d.status !== "active" && !seenOverDeals.has(d.id));
  // A deal that ended as the match went on to the next one: the finished deal stays drawn
  // (see dealEnded) from this drawing on, the next deal not drawn for a moment in between
  // (its points, its cards told to a screen reader, before the deal's end).
  const over = ended.length ? ended[ended.length - 1] : null;
  if (over && before && before.id === over.id && (!deal || deal.id !== over.id)) {
    frozen = { ...before, turn: null, legal: [] };
  }
  draw();
  if (ended.length) {
    const last = ended[ended.length - 1];
    ended.forEach((d) => seenOverDeals.add(d.id));
    dealEnded(last, before);
  } else if (first && data.status !== "active" && data.status !== "waiting") {
    matchOverOnly();
  }
}

// The finished deal as the table shows it under its end: every card played, the last
// trick (from the deal's record, where each trick's cards follow its leader) in view.
function finishedDeal(seen, record, summary) {
  const n = seen.players;
  const tricks = record.tricks.map((t) => ({ ...t, seats: t.cards.map((_, i) => (t.leader + i) % n) }));
  return {
    ...seen, table: [], tricks, hand: [], partner_hand: null, hand_sizes: seen.hand_sizes.map(() => 0),
    stock_count: 0, briscola_on_table: false, briscola_holder: null, turn: null, legal: [], over: true,
    points: summary.points || seen.points,
  };
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function dealEnded(summary, before) {
  const dialog = $("end-dialog");
  const matchOver = detail.status !== "active";
  root.dataset.state = "ending";
  // The match went on to the next deal already (a bot leads it at once): the finished deal
  // stays on the table until its end has been seen.
  const current = detail.current_deal;
  const movedOn = !!(before && before.id === summary.id && (!current || current.id !== summary.id));
  if (movedOn) {
    frozen = { ...before, turn: null, legal: [] };
    draw();
  }
  $("end-title").textContent = matchOver ? T.match_over_title : fmt(T.deal_over, { n: summary.number });
  const us = myTeam();
  let result;
  if (summary.status === "abandoned" || (matchOver && endedEarly())) result = endReasonText();
  else if (summary.winner === null) result = T.deal_drawn;
  else if (detail.players === 2 && mySeat() !== null) {
    result = summary.winner === us ? T.deal_won_1v1 : fmt(T.deal_lost_1v1, { name: seatName(1 - us) });
  } else result = summary.winner === us ? T.deal_won : T.deal_lost;
  $("end-result").textContent = result + matchResultText();
  $("end-replay").href = root.dataset.replay + summary.id + "/";
  $("next-deal").hidden = matchOver;
  $("rematch").hidden = !matchOver || !rematchable();
  $("to-lobby").hidden = !matchOver;
  lobbyFirst($("to-lobby"));
  const sides = $("end-sides");
  sides.replaceChildren();
  const taken = [[], []];
  // Whether the timeout bot played for the viewer, asked beside the deal's record.
  const botNote = matchOver ? botPlayedForMe() : Promise.resolve("");
  try {
    // The dialog waits for the cards taken, but not long: the points need no record.
    const record = (await api(root.dataset.deals + summary.id, { timeoutMs: RECORD_TIMEOUT_MS })).data;
    record.tricks.forEach((t) => { taken[t.winner % 2].push(...t.cards); });
    if (movedOn && record.tricks.length) {
      frozen = finishedDeal(before, record, summary);
      draw();
    }
  } catch (error) {
    // The points still show; the cards need the record.
  }
  botPlayedNote = await botNote;
  drawBotNote();
  // The deal's last trick stays in view a moment before the dialog covers it.
  if (inView && inView.key.startsWith(summary.id + ":")) await pause(inView.since + HOLD_MS - performance.now());
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
    cards.setAttribute("aria-label", oneOnOne && team === us ? T.cards_taken_you : fmt(T.cards_taken, { side: label }));
    taken[team].forEach((c) => cards.appendChild(cardImage(c, "mini")));
    side.append(h, cards);
    sides.appendChild(side);
  });
  if (!dialog.open) dialog.showModal();
  root.dataset.state = matchOver ? "match-over" : "deal-over";
  (matchOver ? ($("rematch").hidden ? $("to-lobby") : $("rematch")) : $("next-deal")).focus();
}

// At the end of a match, whether the timeout bot played for the viewer's seat, in words
// ("A bot played for you after your time ran out."), else "": read from the match's events
// (seat_timed_out with action "bot", seat_taken_by_bot), or from the seat's marks should
// the events not come.
let botPlayedNote = "";

async function botPlayedForMe() {
  const seat = mySeat();
  if (seat === null) return "";
  try {
    const answer = await api(root.dataset.api + "/events", { timeoutMs: RECORD_TIMEOUT_MS });
    const events = (answer.data && answer.data.events) || [];
    const mine = events.filter((e) => e.seat === seat);
    if (mine.some((e) => e.type === "seat_taken_by_bot")) return T.end_bot_held;
    if (mine.some((e) => e.type === "seat_timed_out" && e.action === "bot")) return T.end_bot_played;
    return "";
  } catch (error) {
    const marks = detail.seats[seat] || {};
    return marks.bot_holds ? T.end_bot_held : marks.away ? T.end_bot_played : "";
  }
}

// The note in the end dialog and, once the dialog is closed, on the table.
function drawBotNote() {
  const over = detail.status === "finished" || detail.status === "aborted";
  const text = over ? botPlayedNote : "";
  [$("end-bot-note"), $("bot-note")].forEach((el) => {
    setText(el, text);
    el.hidden = !text;
  });
}

// Only a finished match has a rematch (the API's: 409 match_not_finished otherwise), for
// its players: a match called off (a table cancelled before it started, a resignation
// before every person played) offers the lobby instead, where a new table is opened.
function rematchable() {
  return detail.status === "finished" && mySeat() !== null;
}

// "Back to the lobby" is the primary action where there is no Rematch.
function lobbyFirst(link) {
  const first = !rematchable();
  link.classList.toggle("primary", first);
  link.classList.toggle("secondary", !first);
}

// A match that did not end by being played out: resigned, lost on time, called off.
function endedEarly() {
  return !!detail.end_reason && detail.end_reason !== "played";
}

// Why the match ended early, as the API's end_reason says (a loss on time is no
// resignation): "Ended on time: you ran out of time".
function endReasonText() {
  const reason = detail.end_reason;
  if (reason === "timeout") {
    const seated = mySeat() !== null && detail.winner !== null && detail.winner !== undefined;
    if (!seated) return T.ended.timeout;
    const two = detail.players === 2;
    if (detail.winner === myTeam()) return two ? fmt(T.ended.timeout_other, { name: seatName(1 - mySeat()) }) : T.ended.timeout_other_team;
    return two ? T.ended.timeout_you : T.ended.timeout_your_team;
  }
  if (reason === "abandoned") {
    // Untimed: the side that did not play for too long lost (a loss, not a call-off).
    const seated = mySeat() !== null && detail.winner !== null && detail.winner !== undefined;
    if (!seated) return T.ended.abandoned;
    const two = detail.players === 2;
    if (detail.winner === myTeam()) return two ? fmt(T.ended.abandoned_other, { name: seatName(1 - mySeat()) }) : T.ended.abandoned_other_team;
    return two ? T.ended.abandoned_you : T.ended.abandoned_your_team;
  }
  // Called off after the start: a resignation before every person had played a card.
  if (reason === "aborted" && detail.started_at) return T.ended.resigned_early;
  return T.ended[reason] || T.status[detail.status] || reason || "";
}

// ". You won the match!" once the match is over with a winner, to a player.
function matchResultText() {
  if (detail.status === "active" || detail.winner === null || detail.winner === undefined || mySeat() === null) return "";
  return ". " + (detail.winner === myTeam() ? T.match_won : T.match_lost);
}

// The status line of a match that is over (after its dialog): how it ended, and the result.
function matchOverText() {
  return (endedEarly() ? endReasonText() : T.match_over_title) + matchResultText();
}

function matchOverOnly() {
  const deal = detail.current_deal;
  if (deal) dealEnded({ id: deal.id, number: deal.number, status: deal.status, points: deal.points, winner: deal.winner });
}

async function play(code) {
  if (!myTurn()) return;
  const deal = detail.current_deal;
  if (!deal.legal.includes(code)) return;
  pending = { card: code, ply: deal.ply, deal: deal.id };
  if (inView) inView.released = true; // the person acts: the trick taken gives way
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
    draw();
    if (error.code === "stale_ply" || error.code === "not_your_turn") {
      // Too late: was it the clock, a bot playing this seat's card? The match says so
      // (the seat is "away": the bot played its last turn).
      try {
        const answer = await api(root.dataset.api);
        feed.seen(answer.data, answer.etag);
        show(answer.data);
        const seat = mySeat() === null ? null : detail.seats[mySeat()];
        toast(seat && seat.away ? T.errors.timed_out_bot : errorText(error));
      } catch (again) {
        toast(errorText(error));
      }
      return;
    }
    toast(errorText(error));
    feed.refresh();
  }
}

$("next-deal").addEventListener("click", () => {
  $("end-dialog").close();
});
$("end-dialog").addEventListener("close", () => {
  root.dataset.state = detail.status === "active" ? "playing" : "over";
  frozen = null; // the next deal, as it is now
  draw();
  // Focus the hand as play goes on; once the match is over, the table's next step
  // (Rematch, else the lobby); else the turn line: never nothing (the page's body).
  const over = detail.status !== "active";
  const next = (over ? [$("table-rematch"), $("table-lobby")] : [$("hand").querySelector("button")])
    .find((el) => el && !el.hidden);
  (next || $("turn")).focus();
});

async function rematch() {
  // The API's rematch: the same table and settings, seats rotated by one; the other
  // people are invited, and their own Rematch (the same call) accepts it.
  try {
    const answer = await api(root.dataset.api + "/rematch", { method: "POST" });
    location.assign(root.dataset.lobby + answer.data.id + "/");
  } catch (error) {
    toast(errorText(error));
  }
}
$("rematch").addEventListener("click", rematch);
$("table-rematch").addEventListener("click", rematch);

// An invitation answered at the table: join the seat kept, or decline (the match is then
// called off).
async function answerInvitation(button, path) {
  button.disabled = true;
  try {
    const answer = await api(root.dataset.api + path, { method: "POST", body: path === "/join" ? { seat: invitedSeat() } : {} });
    feed.seen(answer.data, answer.etag);
    show(answer.data);
    if (path === "/join") {
      const first = $("hand").querySelector("button");
      (first || $("turn")).focus();
    }
  } catch (error) {
    toast(errorText(error));
    feed.refresh();
  } finally {
    button.disabled = false;
  }
}
$("join").addEventListener("click", () => answerInvitation($("join"), "/join"));
$("decline").addEventListener("click", () => answerInvitation($("decline"), "/decline"));

// Who wins if the viewer resigns: the opponent, by name, of a 2-player match; the other
// team of 4 players. Before everyone has played a card, nobody: the match is called off.
function resignQuestion() {
  if (!everyonePlayed()) return T.resign_confirm_early;
  if (detail.players === 2) return fmt(T.resign_confirm_1v1, { name: seatName(1 - mySeat()) });
  return T.resign_confirm;
}

$("resign").addEventListener("click", async () => {
  if (!window.confirm(resignQuestion())) return;
  try {
    const answer = await api(root.dataset.api + "/resign", { method: "POST" });
    feed.seen(answer.data, answer.etag);
    show(answer.data);
  } catch (error) {
    toast(errorText(error));
  }
});

// The seat back from the timeout bot (POST .../return): the person plays it again.
$("take-back").addEventListener("click", async () => {
  const button = $("take-back");
  button.disabled = true;
  try {
    const answer = await api(root.dataset.api + "/return", { method: "POST" });
    feed.seen(answer.data, answer.etag);
    show(answer.data);
    const first = $("hand").querySelector('button[aria-disabled="false"]');
    (first || $("turn")).focus();
  } catch (error) {
    // The match ended meanwhile (match_over), or the seat was back already (a card played:
    // seat_not_left): the table as it is now says which.
    if (error.code === "seat_not_left") toast(T.errors.seat_not_left);
    else toast(errorText(error));
    feed.refresh();
  } finally {
    button.disabled = false;
  }
});

// A rematch another person proposed (the match's event rematch_proposed), watched while
// this finished table is open: said on the table, and "Accept the rematch" (the API's
// rematch call, which accepts a rematch proposed already).
let rematchWatch = null;
const REMATCH_WATCH_MS = 15 * 60 * 1000;
let eventsSeen = 0;
let proposal = null; // {match, by}

function watchRematch() {
  if (rematchWatch || !rematchable()) return;
  const others = detail.seats.some((s) => s.user && !s.is_bot && s.seat !== mySeat());
  if (!others) return;
  const since = Date.now();
  const look = async () => {
    // Every 3 s while shown, for 15 minutes: a table left open is not read for ever.
    if (Date.now() - since > REMATCH_WATCH_MS) { clearInterval(rematchWatch); return; }
    if (document.hidden || proposal) return;
    try {
      const answer = await api(root.dataset.api + "/events?after=" + eventsSeen);
      const events = Array.isArray(answer.data) ? answer.data : answer.data.events || answer.data.results || [];
      events.forEach((e) => {
        if (typeof e.id === "number") eventsSeen = Math.max(eventsSeen, e.id);
        if (e.type === "rematch_proposed" && e.by !== root.dataset.me) proposal = { match: e.match, by: e.by };
      });
      if (proposal) drawProposal();
    } catch (error) {
      // Looked at again at the next tick.
    }
  };
  look();
  rematchWatch = setInterval(look, 3000);
}

function drawProposal() {
  const text = fmt(T.rematch_proposed, { name: proposal.by });
  [$("rematch-note"), $("end-rematch-note")].forEach((el) => { el.textContent = text; el.hidden = false; });
  [$("rematch"), $("table-rematch")].forEach((el) => { el.textContent = T.rematch_accept; });
}

$("cancel").addEventListener("click", async () => {
  if (!window.confirm(T.cancel_confirm)) return;
  $("cancel").disabled = true;
  try {
    const answer = await api(root.dataset.api + "/abort", { method: "POST" });
    feed.seen(answer.data, answer.etag);
    show(answer.data);
  } catch (error) {
    toast(errorText(error));
    feed.refresh();
  } finally {
    $("cancel").disabled = false;
  }
});

$("show-last").addEventListener("click", () => {
  const deal = detail && detail.current_deal;
  const trick = lastTrick(deal);
  const cards = $("last-cards");
  cards.replaceChildren();
  if (trick) {
    // Each card with the name of who played it under it, in the order played; the card
    // that took the trick marked, as the caption says.
    trick.cards.forEach((c, i) => {
      const seat = trick.seats[i];
      const figure = document.createElement("figure");
      figure.className = "played" + (seat === trick.winner ? " winner" : "");
      figure.dataset.seat = seat;
      const el = cardImage(c, seat === trick.winner ? "winner" : "");
      el.setAttribute("aria-label", fmt(T.played_by, { card: cardName(c), name: seatName(seat) }));
      const name = document.createElement("figcaption");
      name.textContent = seatName(seat);
      name.title = seatName(seat);
      name.setAttribute("aria-hidden", "true"); // the card's own name says who played it
      figure.append(el, name);
      cards.appendChild(figure);
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
