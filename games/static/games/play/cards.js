// Cards drawn by the project: an Italian deck's suits (coppe, denari, spade, bastoni) as
// inline SVG, the rank in the corners. A card is a <button> when it can be played.
import { T } from "./api.js";

const SUIT_SVG = {
  // coppe: a chalice
  c: '<path d="M6 3h12c0 5.5-2.6 9-6 9s-6-3.5-6-9z" fill="#c62828"/><path d="M11 12h2v5h-2z" fill="#c62828"/><path d="M7.5 18.5h9a1 1 0 0 1 0 2.5h-9a1 1 0 0 1 0-2.5z" fill="#c62828"/><path d="M8 5h8" stroke="#ffd54f" stroke-width="1.2"/>',
  // denari: a gold coin with a rosette
  d: '<circle cx="12" cy="12" r="9.5" fill="#f2c12e" stroke="#8d6e00" stroke-width="1.6"/><circle cx="12" cy="12" r="5" fill="none" stroke="#8d6e00" stroke-width="1.3"/><circle cx="12" cy="12" r="1.6" fill="#8d6e00"/>',
  // spade: a straight sword, point up
  s: '<path d="M12 1.5l2 3v11h-4v-11z" fill="#90a4ae" stroke="#1e4f8a" stroke-width="0.9"/><path d="M6.5 15.5h11v2h-11z" fill="#1e4f8a"/><path d="M11 17.5h2v4.5h-2z" fill="#6d4c1f"/>',
  // bastoni: a knotted club
  b: '<g transform="rotate(-28 12 12)"><path d="M10 2.5h4l-.6 19h-2.8z" fill="#4e7d22" stroke="#2f5112" stroke-width="0.9"/><circle cx="12" cy="7" r="1.1" fill="#2f5112"/><circle cx="12" cy="12" r="1.1" fill="#2f5112"/><circle cx="12" cy="16.5" r="1" fill="#2f5112"/></g>',
};

export function cardName(code) {
  return (T.cards && T.cards[code]) || code;
}

function face(el, code) {
  const rank = code[0];
  const suit = code[1];
  const label = (T.rank_labels && T.rank_labels[rank]) || rank;
  el.classList.add("card", "suit-" + suit);
  el.dataset.card = code;
  el.innerHTML =
    '<span class="rank tl" aria-hidden="true">' + label + "</span>" +
    '<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false">' + (SUIT_SVG[suit] || "") + "</svg>" +
    '<span class="rank br" aria-hidden="true">' + label + "</span>";
}

// A card that is only shown: role img with its name.
export function cardImage(code, extra) {
  const el = document.createElement("div");
  if (!code) {
    el.className = "card back" + (extra ? " " + extra : "");
    el.setAttribute("aria-hidden", "true");
    return el;
  }
  face(el, code);
  if (extra) el.classList.add(...extra.split(" "));
  el.setAttribute("role", "img");
  el.setAttribute("aria-label", cardName(code));
  return el;
}

// A card of the player's hand: a button whose accessible name says the card (its text,
// read by screen readers; the corners' letters and the drawing are hidden from them).
export function cardButton(code) {
  const el = document.createElement("button");
  el.type = "button";
  face(el, code);
  const name = document.createElement("span");
  name.className = "visually-hidden";
  name.textContent = cardName(code);
  el.appendChild(name);
  return el;
}
