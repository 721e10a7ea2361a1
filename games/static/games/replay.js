// The replay page: steps through GET /api/v1/deals/{id}/replay. Plain JavaScript, no
// dependencies. Every position is asked of the API (which decides what this viewer may
// see); positions already fetched are kept. Its words come in the page's language with
// the page (the "replay-strings" JSON, games/play/strings.py).
(function () {
  "use strict";
  const root = document.getElementById("replay");
  // A deal this viewer may not replay yet (still being played, and not theirs): the page
  // says so in place of the table, and asks the API for nothing.
  if (root.dataset.closed === "1") return;
  const $ = (id) => document.getElementById(id);
  const SVG = {
    c: '<path d="M5 3h14c0 6-3 9.5-7 9.5S5 9 5 3z" fill="#c0392b"/><rect x="11" y="12" width="2" height="6" fill="#c0392b"/><rect x="7" y="18" width="10" height="3" rx="1.5" fill="#c0392b"/>',
    d: '<circle cx="12" cy="12" r="9" fill="#e2b32e" stroke="#8a6d0b" stroke-width="2"/><circle cx="12" cy="12" r="4" fill="none" stroke="#8a6d0b" stroke-width="1.5"/>',
    s: '<path d="M12 1.5l2.2 3.2V16h-4.4V4.7z" fill="#3b7dd8" stroke="#1f4f8f" stroke-width="0.8"/><rect x="6.5" y="15.5" width="11" height="2.2" rx="1" fill="#6b4a1f"/><rect x="10.9" y="17.6" width="2.2" height="4.6" rx="1" fill="#6b4a1f"/>',
    b: '<g transform="rotate(25 12 12)"><rect x="9.5" y="1.5" width="5" height="21" rx="2.5" fill="#5f8f2f" stroke="#3c5e1a" stroke-width="0.8"/><circle cx="12" cy="7" r="1.2" fill="#3c5e1a"/><circle cx="12" cy="13" r="1.2" fill="#3c5e1a"/></g>',
  };
  const T = JSON.parse(document.getElementById("replay-strings").textContent);
  const fmt = (template, values) =>
    template.replace(/%\((\w+)\)s/g, (_, name) => (values[name] === undefined ? "" : String(values[name])));
  const cardName = (code) =>
    fmt(T.card_name, { rank: T.rank_names[code[0]] || code[0], suit: T.suit_names[code[1]] || code[1] });

  const players = Number(root.dataset.players);
  const params = new URLSearchParams(location.search);
  const select = $("seat-select");
  // The views the page offers are those the API allows this viewer (the server chose the
  // menu's options): a view asked for in the address that is not among them is not asked
  // of the API. "hidden": the hands face down, offered first to an administrator looking
  // at a deal still being played (data-guarded), who sees them only when asked.
  const offered = select ? Array.from(select.options).map((o) => o.value) : [];
  const guarded = root.dataset.guarded === "1";
  let seat = params.get("seat") || "";
  if (guarded) seat = "hidden";
  else if (select && !offered.includes(seat)) seat = offered[0] === undefined ? "" : offered[0];
  if (select) select.value = seat;
  let cache = new Map();
  let current = null;
  let plies = null;

  function card(code, extra) {
    const el = document.createElement("div");
    el.setAttribute("role", "img");
    if (!code) {
      el.className = "card back";
      el.title = T.hidden_card;
      el.setAttribute("aria-label", T.hidden_card);
      return el;
    }
    const rank = code[0];
    const suit = code[1];
    const label = T.rank_labels[rank] || rank; // the corner: A 3 R C F, or A 3 K N J
    el.className = "card suit-" + suit + (extra ? " " + extra : "");
    el.dataset.card = code;
    el.title = cardName(code);
    el.setAttribute("aria-label", cardName(code));
    el.innerHTML =
      '<span class="rank" aria-hidden="true">' + label + "</span>" +
      '<svg viewBox="0 0 24 24" aria-hidden="true">' + (SVG[suit] || "") + "</svg>" +
      '<span class="rank br" aria-hidden="true">' + label + "</span>";
    return el;
  }

  function seatName(data, s) {
    const info = data.match.seats[s];
    return info && info.user ? info.user : T.open_seat;
  }

  // The viewer's own seat when they play in the match, else null (a spectator).
  const mine = () => (root.dataset.yourSeat === "" ? null : Number(root.dataset.yourSeat));

  // A side as the table says it: to a player "You" (or "Your team") and the other's name
  // (or "Their team"); to a spectator the players' names.
  function sideName(data, team) {
    const me = mine();
    if (me !== null) {
      if (team === me % 2) return players === 2 ? T.you_side : T.your_team;
      return players === 2 ? seatName(data, 1 - me) : T.their_team;
    }
    return players === 2 ? seatName(data, team) : seatName(data, team) + " & " + seatName(data, team + 2);
  }

  // Who won the deal, "You win 70-50", "bob wins 70-50", "Your team wins 70-50".
  function wonText(data, team, points) {
    const values = { points: points[team], other: points[1 - team] };
    const me = mine();
    if (me !== null) {
      if (team === me % 2) return fmt(players === 2 ? T.won.you : T.won.your_team, values);
      return players === 2 ? fmt(T.won.name, { ...values, name: seatName(data, 1 - me) }) : fmt(T.won.their_team, values);
    }
    return players === 2
      ? fmt(T.won.name, { ...values, name: seatName(data, team) })
      : fmt(T.won.pair, { ...values, names: sideName(data, team) });
  }

  // A seat's role, as the table's badges say it: you, partner, opponent; to a spectator
  // of four, whom the seat plays with.
  function roleOf(data, s) {
    const me = mine();
    if (me !== null) {
      if (s === me) return T.you;
      return players === 4 && s % 2 === me % 2 ? T.partner : T.opponent;
    }
    return players === 4 ? fmt(T.with_partner, { name: seatName(data, (s + 2) % 4) }) : "";
  }

  // One line of the log, the cards by name in the page's language.
  function describe(step, data) {
    const seat = (s) => seatName(data, s);
    const L = T.log;
    switch (step.type) {
      case "deal_started": return fmt(L.deal_started, { seat: seat(step.dealer), card: cardName(step.briscola) });
      case "hand_dealt":
        return step.cards && !covered()
          ? fmt(L.hand_dealt, { seat: seat(step.seat), cards: step.cards.map(cardName).join(", ") })
          : fmt(L.hand_dealt_hidden, { seat: seat(step.seat) });
      // Numbered as the move counter counts: the first card is move 1.
      case "card_played": return fmt(L.card_played, { n: step.ply + 1, seat: seat(step.seat), card: cardName(step.card) });
      case "trick_won": return fmt(L.trick_won, { seat: seat(step.winner), n: step.trick + 1, points: step.points });
      case "card_drawn":
        // The face-up briscola drawn is seen by all; any other card only by its seat.
        if (!step.card || (covered() && !step.briscola)) return fmt(L.card_drawn_hidden, { seat: seat(step.seat) });
        return fmt(step.briscola ? L.card_drawn_briscola : L.card_drawn, { seat: seat(step.seat), card: cardName(step.card) });
      case "deal_ended":
        return step.winner === null
          ? fmt(L.deal_ended_drawn, { points: step.points.join("-") })
          : fmt(L.deal_ended, { result: wonText(data, step.winner, step.points) });
      default: return step.type;
    }
  }

  // The hands face down (the "hidden" view): every seat's cards as their backs.
  const covered = () => seat === "hidden";

  function hiddenHand(n) {
    const list = [];
    for (let i = 0; i < n; i++) list.push(null);
    return list;
  }

  function render(data) {
    current = data;
    const pos = data.position;
    const table = $("table");
    table.querySelectorAll(".seat").forEach((el) => el.remove());
    const bottom = data.seat !== null ? data.seat : (data.your_seat !== null ? data.your_seat : 0);
    const places = players === 2 ? ["bottom", "top"] : ["bottom", "right", "top", "left"];
    // The last position of a deal abandoned (the match ended during it): nobody is to play.
    const abandonedEnd = data.ply === data.plies && data.deal.status === "abandoned";
    const turn = abandonedEnd ? null : pos.turn;
    for (let i = 0; i < players; i++) {
      const s = (bottom + i) % players;
      let hand;
      if (covered()) hand = hiddenHand(pos.hands ? pos.hands[s].length : pos.hand_sizes[s]);
      else if (pos.hands) hand = pos.hands[s];
      else if (pos.seat === s) hand = pos.hand;
      else if (pos.partner_hand && (pos.seat + 2) % players === s) hand = pos.partner_hand;
      else hand = hiddenHand(pos.hand_sizes[s]);
      const el = document.createElement("div");
      el.className = "seat pos-" + places[i] + (turn === s ? " turn" : "");
      el.dataset.seat = s;
      const title = document.createElement("div");
      title.className = "name";
      title.textContent = seatName(data, s);
      const tags = [roleOf(data, s)].filter(Boolean);
      if (pos.dealer === s) tags.push(T.dealer);
      if (turn === s) tags.push(T.to_play);
      if (pos.briscola_holder === s) tags.push(T.holds_briscola);
      tags.forEach((t) => { const span = document.createElement("span"); span.className = "tag"; span.textContent = t; title.appendChild(span); });
      const cards = document.createElement("div");
      cards.className = "cards hand";
      hand.forEach((c) => cards.appendChild(card(c, c && c[1] === pos.trump ? "trump" : "")));
      el.append(title, cards);
      table.appendChild(el);
    }
    const briscola = $("briscola");
    briscola.replaceChildren();
    if (pos.briscola_on_table) briscola.appendChild(card(pos.briscola, "trump"));
    else {
      const gone = document.createElement("span");
      gone.className = "gone";
      gone.textContent = pos.briscola_holder !== null
        ? fmt(T.briscola_held, { card: cardName(pos.briscola), seat: seatName(data, pos.briscola_holder) })
        : fmt(T.briscola_gone, { card: cardName(pos.briscola) });
      briscola.appendChild(gone);
    }
    $("stock-count").textContent = pos.stock_count;
    $("stock-pile").classList.toggle("empty", pos.stock_count === 0);
    $("stock-pile").title = fmt(T.stock, { n: pos.stock_count });
    const trick = $("trick");
    trick.replaceChildren();
    pos.table.forEach((t) => {
      const wrap = document.createElement("div");
      wrap.className = "played";
      wrap.append(card(t.card), document.createTextNode(seatName(data, t.seat)));
      trick.appendChild(wrap);
    });
    const last = $("last-trick");
    last.replaceChildren();
    const lastTrick = pos.tricks.length ? pos.tricks[pos.tricks.length - 1] : null;
    $("last-trick-label").textContent = lastTrick
      ? fmt(T.trick_of, { n: pos.tricks.length, seat: seatName(data, lastTrick.winner), points: lastTrick.points })
      : T.last_trick;
    if (lastTrick) {
      lastTrick.cards.forEach((c, i) => {
        const wrap = document.createElement("div");
        wrap.className = "played" + (lastTrick.seats[i] === lastTrick.winner ? " winner" : "");
        wrap.append(card(c), document.createTextNode(seatName(data, lastTrick.seats[i])));
        last.appendChild(wrap);
      });
    }
    $("points-0").textContent = pos.points[0];
    $("points-1").textContent = pos.points[1];
    // Each side by the words the table uses; a player of four sees the names too.
    [0, 1].forEach((team) => {
      $("team-" + team + "-name").textContent = sideName(data, team);
      $("team-" + team + "-who").textContent = players === 4 && mine() !== null
        ? "(" + seatName(data, team) + ", " + seatName(data, team + 2) + ")"
        : "";
    });
    $("result").textContent = pos.over
      ? (pos.winner === null
        ? T.drawn
        : wonText(data, pos.winner, pos.points))
      : (abandonedEnd ? T.abandoned : "");
    $("ply-label").textContent = fmt(T.move_of, { ply: data.ply, plies: data.plies });
    const slider = $("slider");
    slider.max = data.plies;
    slider.value = data.ply;
    $("first").disabled = $("prev").disabled = data.ply === 0;
    $("next").disabled = $("last").disabled = data.ply >= data.plies;
    const log = $("log");
    log.replaceChildren();
    // At the end of an abandoned deal, why it ended is its last line.
    const lines = data.steps.map((step) => describe(step, data));
    if (abandonedEnd) lines.push(T.abandoned);
    lines.slice(-8).forEach((line, i, list) => {
      const li = document.createElement("li");
      li.textContent = line;
      if (i === list.length - 1) li.className = "current";
      log.appendChild(li);
    });
    $("error").hidden = true;
    root.dataset.ply = data.ply;
    root.dataset.plies = data.plies;
    showInAddress(data.ply);
  }

  // The address follows the position shown (?ply=N, the other parameters, such as the
  // seat, kept), so that it may be copied and opened elsewhere at the same move: replaced,
  // not pushed (no entry in the history per step). The language switch's return address
  // follows it too.
  function showInAddress(ply) {
    const url = new URL(location.href);
    if (url.searchParams.get("ply") !== String(ply)) {
      url.searchParams.set("ply", ply);
      history.replaceState(history.state, "", url);
    }
    document.querySelectorAll('form.lang input[name="next"]').forEach((input) => {
      input.value = location.pathname + location.search;
    });
  }

  // On a phone the score and the steps stay docked at the bottom of the screen (replay.css);
  // when the page opens with the dock over the bottom seat's cards (a long header, a score
  // of four on two lines), it scrolls just enough to show them whole.
  function ownCardsInView() {
    const dock = root.querySelector(".dock");
    const hand = $("table").querySelector(".seat.pos-bottom");
    if (!dock || !hand || getComputedStyle(dock).position !== "sticky") return;
    const over = hand.getBoundingClientRect().bottom - dock.getBoundingClientRect().top;
    if (over > 0) window.scrollBy({ top: Math.ceil(over) + 4, behavior: "instant" });
  }

  function showError(body) {
    const el = $("error");
    el.hidden = false;
    // The API's error in the page's language when the page knows its code.
    // Never the API's own message: it is English, written for developers.
    el.textContent = (body && T.errors[body.code]) || T.load_failed;
    if (body && (body.code === "not_authenticated" || body.code === "authentication_failed")) {
      const a = document.createElement("a");
      a.href = root.dataset.signin + "?next=" + encodeURIComponent(location.pathname + location.search);
      a.textContent = T.sign_in;
      el.append(" ", a);
    }
    root.dataset.error = body && body.code ? body.code : "error";
  }

  // The step asked for, ``target``: every press (a button, an arrow key, Home, End, the
  // slider) moves it from where the last press left it, not from the position on screen,
  // which may still be loading. Its number shows at once; the position follows once it is
  // fetched, one request at a time, the newest target each time (answers for steps passed
  // meanwhile are kept in the cache, not drawn). ``Infinity``: the end, before the number
  // of moves is known. A new view (the seat menu) is a new ``generation``: an answer for
  // the old one is dropped.
  let target = null;
  let loading = false;
  let generation = 0;
  let shownGeneration = -1;

  async function load(ply) {
    const key = ply === null ? "end" : String(ply);
    const store = cache;
    if (store.has(key)) return store.get(key);
    const query = new URLSearchParams();
    if (ply !== null) query.set("ply", ply);
    if (seat !== "" && seat !== "hidden") query.set("seat", seat);
    const response = await fetch(root.dataset.api + "?" + query, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    const body = await response.json().catch(() => null);
    if (!response.ok) throw body || { code: "error" };
    store.set(String(body.ply), body);
    return body;
  }

  // The controls as the target is: its number, the slider, the ends' buttons disabled.
  function showTarget() {
    if (target === null || plies === null || !Number.isFinite(target)) return;
    $("ply-label").textContent = fmt(T.move_of, { ply: target, plies: plies });
    const slider = $("slider");
    slider.max = plies;
    slider.value = target;
    $("first").disabled = $("prev").disabled = target === 0;
    $("next").disabled = $("last").disabled = target >= plies;
    root.dataset.target = target;
    $("table").setAttribute("aria-busy", current && current.ply === target ? "false" : "true");
  }

  function go(ply) {
    if ($("table").hidden) return; // a live deal's hands not asked for yet (below)
    if (plies !== null) ply = Math.min(plies, ply);
    target = Math.max(0, ply);
    showTarget();
    pump();
  }

  async function pump() {
    if (loading) return;
    loading = true;
    try {
      while (target !== null && !(current && current.ply === target && shownGeneration === generation)) {
        const asked = generation;
        let data;
        try {
          data = await load(Number.isFinite(target) ? target : null);
        } catch (body) {
          if (asked !== generation) continue;
          // An address whose ?ply= is past the deal's end (or, live, past the present)
          // opens at the end, not on an error: the last position there is to see.
          if (current === null && Number.isFinite(target) && target > 0 && body &&
              (body.code === "invalid_input" || body.code === "replay_beyond_present")) {
            target = Infinity;
            continue;
          }
          showError(body);
          // The controls go back to the position shown.
          if (current) { target = current.ply; showTarget(); }
          break;
        }
        if (asked !== generation) continue;
        plies = data.plies;
        target = Math.min(target, plies);
        if (data.ply === target) {
          const first = current === null;
          render(data);
          shownGeneration = generation;
          if (first) ownCardsInView();
        }
        showTarget();
      }
    } finally {
      loading = false;
    }
  }

  const step = (delta) => {
    if (target === null) return;
    if (!Number.isFinite(target)) {
      if (plies === null) return;
      target = plies;
    }
    go(target + delta);
  };
  $("first").addEventListener("click", () => go(0));
  $("prev").addEventListener("click", () => step(-1));
  $("next").addEventListener("click", () => step(1));
  $("last").addEventListener("click", () => go(plies !== null ? plies : Infinity));
  $("slider").addEventListener("input", (e) => go(Number(e.target.value)));
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLSelectElement || e.altKey || e.ctrlKey || e.metaKey) return;
    const keys = { ArrowLeft: () => step(-1), ArrowRight: () => step(1), Home: () => go(0), End: () => go(plies !== null ? plies : Infinity) };
    if (keys[e.key]) {
      e.preventDefault();
      keys[e.key]();
    }
  });
  if (select) {
    select.addEventListener("change", () => {
      seat = select.value;
      const url = new URL(location.href);
      if (seat === "" || seat === "hidden") url.searchParams.delete("seat"); else url.searchParams.set("seat", seat);
      history.replaceState(null, "", url);
      cache = new Map();
      generation += 1;
      go(target !== null && Number.isFinite(target) ? target : current ? current.ply : 0);
    });
  }

  // A deal still being played, to an administrator: its hands and its record only once
  // asked for ("Show them anyway"), under a warning, as the admin's deal page shows a
  // live deal's seed.
  // Until then the page asks the API for nothing (its positions carry every hand): the
  // table, the score, the controls and the log wait hidden.
  const showAnyway = $("show-anyway");
  const waiting = [$("table"), root.querySelector(".dock"), $("log")];
  if (showAnyway) {
    waiting.forEach((el) => { el.hidden = true; });
    showAnyway.addEventListener("click", () => {
      waiting.forEach((el) => { el.hidden = false; });
      $("live-guard-hidden").hidden = true;
      $("live-guard-shown").hidden = false;
      const records = $("records");
      if (records) records.hidden = false;
      select.disabled = false;
      select.value = "";
      select.dispatchEvent(new Event("change"));
      select.focus();
    });
  }

  // "Verify": the deal's record checked by the API (GET /deals/{id}/verify), said here in
  // the page's language, each check passed or failed.
  const verify = $("verify");
  if (verify && root.dataset.verify) {
    verify.addEventListener("click", async () => {
      const out = $("verify-result");
      const V = T.verify;
      out.hidden = false;
      out.replaceChildren(document.createTextNode(V.checking));
      out.removeAttribute("data-ok");
      try {
        const response = await fetch(root.dataset.verify, {
          credentials: "same-origin",
          headers: { Accept: "application/json" },
        });
        const body = await response.json().catch(() => null);
        if (!response.ok || !body) throw body || { code: "error" };
        const title = document.createElement("p");
        title.className = "verdict";
        title.textContent = body.ok ? V.ok : V.failed;
        const list = document.createElement("ul");
        body.checks.forEach((check) => {
          const li = document.createElement("li");
          li.className = check.ok ? "ok" : "failed";
          li.dataset.check = check.name;
          const mark = document.createElement("span");
          mark.className = "mark";
          mark.setAttribute("aria-hidden", "true");
          mark.textContent = check.ok ? "\u2713" : "\u2717";
          li.append(mark, " " + (V.checks[check.name] || check.name) + ": " + (check.ok ? V.passed : V.not_passed));
          list.appendChild(li);
        });
        out.replaceChildren(title, list);
        out.dataset.ok = body.ok ? "1" : "0";
      } catch (body) {
        out.hidden = true;
        showError(body);
      }
    });
  }

  const start = params.get("ply");
  const first = start !== null && /^\d+$/.test(start) ? Number(start) : 0;
  if (showAnyway) target = first; // asked for once shown ("Show them anyway")
  else go(first);
})();
