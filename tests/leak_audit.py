"""The secrecy detector: is there, in one HTTP response or one block of a live stream, a card
its viewer may not know (then) or a piece of the seed of a deal still being played? Shared
by every test that looks for leaks (``tests/hardening/test_no_leaks.py``,
``test_no_leaks_streams.py``, the API and replay scanners); its own proof is
``tests/hardening/test_leak_detector.py`` and ``bench/audit_mutations.py``.

docs/rules.md, "What each seat may know": during a deal a seat knows its own hand, the face-up
briscola, the cards played, and (4 players, option on, stock empty) its partner's hand;
nothing else -- not the other hands, not the stock, not the seed. Once a deal ends,
everything about it is open to the match's players (to everyone if the match is public).

The truth is read from the models (not through the API or the selectors) and replayed by
:mod:`games.rules`. The secret cards for a seat: the other seats' hands and the stock, minus
the face-up briscola (public, also once drawn), minus the partner's hand once the rules show
it; for a viewer with no seat, every hand. The secret strings: the seed of every deal still
being played, and each of its substrings of ``SEED_PIECE`` characters, in any letter case.

How a body is searched (precisely, rather than loosely):

- Card codes are whole tokens in their emitted form (``CARD_TOKEN``: rank upper case, suit
  lower case, no letter or digit on either side), wherever they are: alone in a string,
  inside an error message, in a key. ``Ad`` in ``Admin``, ``3d`` in ``translate3d`` or
  ``2c`` in a hex string do not count (a lower-case ``ad`` would not be caught: the API
  emits codes in one form only).
- JSON is decoded and every key and string value is searched (an escape such as ``\\n2c``
  would hide a code from a raw-text search); the seed search covers the raw text too.
- HTML (the browsable API, the replay page) is searched raw and with its entities, named
  and numeric, unescaped (``&quot;Ad&quot;`` -> ``"Ad"``, ``&#65;d`` -> ``Ad``): text,
  attributes and scripts alike. The browsable API's response block (``<pre
  class="prettyprint">``) is cut out, its ``urlize`` links stripped, and decoded as the JSON
  it is. Outside that block a page must hold no card-like token at all (asserted on every
  page), so nothing in the pages' own CSS, scripts or words needs allowing for.
- Response headers are searched too (names and values). The values that are random hex
  by construction (``DIGEST_HEADERS``: the request id, the ETag digest) are searched for
  cards and for the seed in pieces of ``DIGEST_SEED_PIECE`` characters: 32 random hex
  digits hold one of a few hundred 8-digit pieces by chance about once in 10,000 responses
  (the audit sends more than that), 16-digit ones practically never.
- What is about a deal that is over is public, but only what is shown to be exactly that
  deal's truth is left out of the search: in its events the rules engine's keys (equal to
  the rules engine's events of the finished deal), in its records and exports the deck and
  the moves (and the seed), in its record the hands, tricks and draws, in its replay the
  position (equal to the rules' view) and in each step the rules' keys. Everything else of
  such content -- any key the API adds, any new field -- is searched like any other body;
  nothing is dropped unsearched. A text export's section about a finished deal must name
  exactly its briscola and its moves, in order, and no other card.
- A refused move may repeat the card the client sent (``card_not_in_hand``): the caller
  allows that code in that one response (``allow``).

The live streams (issue 13) are searched by the same code, block by block
(:meth:`Audit.check_stream`): an SSE event's ``data`` as a JSON body and its other lines
(``id``, ``event``, comments, ``retry``) as its headers; an NDJSON line as a JSON body. A
match stream's event is checked against the secrets at its ``id``, the match's position
(:meth:`Truth.at`, a :class:`Timeline` of the models checked against the service's own
position): the deal then played, cut back to the cards played then. Its detail must be
the match at that position, and the card its ``move`` names that deal's card at that ply
(then left out: public once played, and of a deal now over, in the next deal's hands). An
account stream's blocks (:meth:`Audit.check_account_event`) may name no card at all, nor
any piece of any deal's seed. A stream's headers are checked once, as it opens.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from rest_framework.test import APIClient

from accounts.models import RatingChange, User
from games import rules
from games.matches import selectors
from games.models import Deal, DealStatus, Match, MatchEvent, MatchStatus, Move, Seat

CARD_TOKEN = re.compile(r"(?<![0-9A-Za-z])([A3RCF2-7][cdsb])(?![0-9A-Za-z])")
EVERY_CARD = frozenset(card.code for card in rules.CARDS)
DEAL_CARDS = len(rules.CARDS)
SEED_PIECE = 8  # hex characters: 32 of the seed's 128 bits
DIGEST_SEED_PIECE = 16  # in values random by construction: 64 bits, never there by chance
DIGEST_HEADERS = frozenset({"etag", "x-request-id"})
PRE_BLOCK = re.compile(
    r'<pre class="prettyprint"><span class="meta nocode">(?P<meta>.*?)</pre>', re.DOTALL
)
TAG = re.compile(r"<[^>]+>")
ERROR_KEYS = {"code", "message", "details"}
# What of a finished deal's record or export is checked against its truth, and then left out.
RECORD_CHECKED = ("deck", "moves", "seed")

Capture = Callable[..., AbstractContextManager[Any]]


# --- The server's truth ------------------------------------------------------------------


@cache
def _deck(seed: str) -> tuple[rules.Card, ...]:
    return rules.shuffled_deck(seed)


@dataclass
class DealTruth:
    pk: int
    number: int
    seed: str
    over: bool
    state: rules.Deal


class Secrets:
    """What a viewer may not know in one state of a match: the cards (:meth:`hidden`) and
    the seeds (``active_seeds``); the deals that are over (``finished``: open to the
    match's viewers) and their events by the rules (``finished_events``)."""

    match: Match
    deals: dict[int, DealTruth]
    active: DealTruth | None
    active_seeds: tuple[str, ...]
    _hidden: dict[int | None, frozenset[str]]
    _events: dict[tuple[int, int | None], list[dict[str, Any]]]

    @property
    def finished(self) -> dict[int, DealTruth]:
        return {pk: d for pk, d in self.deals.items() if d.over}

    def finished_events(self, deal_id: int, seat: int | None) -> list[dict[str, Any]]:
        if (deal_id, seat) not in self._events:
            self._events[deal_id, seat] = rules.deal_events(self.deals[deal_id].state, seat)
        return self._events[deal_id, seat]

    def hidden(self, seat: int | None) -> frozenset[str]:
        """The cards ``seat`` (None: a viewer with no seat) may not know right now."""
        if seat not in self._hidden:
            self._hidden[seat] = self._compute_hidden(seat)
        return self._hidden[seat]

    def _compute_hidden(self, seat: int | None) -> frozenset[str]:
        if self.active is None:
            return frozenset()
        state = self.active.state
        n = state.players
        shown = set() if seat is None else {seat}
        if (
            seat is not None
            and n == 4
            and self.match.partners_last_hand
            and state.stock_count == 0
            and not state.is_over
        ):
            shown.add((seat + 2) % n)  # docs/rules.md: partners' last hand
        cards = {c.code for s in range(n) if s not in shown for c in state.hands[s]}
        cards |= {c.code for c in state.stock}
        cards.discard(state.briscola.code)  # face up: public, also once drawn
        return frozenset(cards)


class Truth(Secrets):
    """One match as the database has it, each deal replayed from its seed and move log;
    and its timeline, for the streams, whose event ids are the match's positions:
    :meth:`at` gives the secrets as they were at a position."""

    def __init__(self, match_id: str) -> None:
        self.match_id = match_id
        self.deals = {}
        self.active = None
        self.active_seeds = ()
        self._hidden = {}
        self._events = {}
        self._timeline: Timeline | None = None
        self.refresh()

    def refresh(self) -> None:
        self.match = Match.objects.get(pk=self.match_id)
        deals: dict[int, DealTruth] = {}
        self.active = None
        for deal in Deal.objects.filter(match_id=self.match_id).order_by("number"):
            known = self.deals.get(deal.pk)
            if known is not None and known.over:  # a deal that is over never changes
                deals[deal.pk] = known
                continue
            state = rules.Deal(self.match.players, deal.dealer, _deck(deal.seed))
            log = Move.objects.filter(deal=deal).order_by("ply")
            for ply, seat, card in log.values_list("ply", "seat", "card"):
                assert ply == state.ply and seat == state.turn, (deal.pk, ply, seat)
                state.play(card, seat=seat)
            over = deal.status != DealStatus.ACTIVE
            # abandoned: the match ended during the deal (a resignation, a forfeit)
            assert over == state.is_over or deal.status == DealStatus.ABANDONED, (
                deal.pk,
                deal.status,
                state.ply,
            )
            deals[deal.pk] = DealTruth(deal.pk, deal.number, deal.seed, over, state)
            if not over:
                assert self.active is None, "two active deals in one match"
                self.active = deals[deal.pk]
        self.deals = deals
        self.active_seeds = tuple(
            Deal.objects.filter(status=DealStatus.ACTIVE).values_list("seed", flat=True)
        )
        self._hidden = {}
        self._timeline = None

    def at(self, position: int) -> Moment:
        """The secrets as they were when the match reached ``position`` (from the models
        as the last :meth:`refresh` read them, which must have seen the position)."""
        if self._timeline is None:
            self._timeline = Timeline(self)
        return self._timeline.at(position)


class Moment(Secrets):
    """A match's secrets at an earlier position: the deals before it over (open), the deal
    then being played cut back to the cards played then, the later deals not there yet."""

    def __init__(self, truth: Truth, position: int, deal: DealTruth | None, moves: int) -> None:
        self.match = truth.match
        self.position = position
        self.deal = deal  # the deal being played or just over then (None: none dealt yet)
        self.moves = moves
        self.deals = {}
        self.active = None
        for known in sorted(truth.deals.values(), key=lambda d: d.number):
            if deal is None or known.number > deal.number:
                break
            if known.pk == deal.pk:  # as it was then (an abandoned deal: still played)
                state = _prefix(known, moves) if moves < known.state.ply else known.state
                known = DealTruth(known.pk, known.number, known.seed, state.is_over, state)
            self.deals[known.pk] = known
            if not known.over:
                self.active = known
        # The deals being played now anywhere are secret, and this one if it was then.
        seeds = set(truth.active_seeds) | ({self.active.seed} if self.active else set())
        self.active_seeds = tuple(sorted(seeds))
        self._hidden = {}
        self._events = truth._events


class Timeline:
    """Where a match was at each position. A position (a stream event's id, docs/bots.md)
    counts the seats taken, each deal (41: its start and its 40 cards), the cards of the
    deal being played, the match's end, its rating and each of its events, twice (a
    timeout, a seat taken over, a rematch proposed: each placed by its deal and ply, before
    the card at that ply; or before the first deal; or after the end). Read from the models, and
    checked against the service's own position of the match's version: a model of the
    positions gone wrong fails here, rather than check an event against another moment."""

    def __init__(self, truth: Truth) -> None:
        self.truth = truth
        match = truth.match
        joined = Seat.objects.filter(match=match, joined_at__isnull=False).count()
        events = list(
            MatchEvent.objects.filter(match=match).values_list("deal", "ply", "after_end")
        )
        rated = RatingChange.objects.filter(match_id=match.pk).exists()
        order = sorted(truth.deals.values(), key=lambda d: d.number)
        number = {d.pk: k for k, d in enumerate(order)}
        # Each event counts twice (games.live.events.position: a seat left also takes one
        # from the seats joined, and the position must still grow).
        before_deals = 2 * sum(1 for d, _, after in events if d is None and not after)
        after_end = 2 * sum(1 for d, _, after in events if d is None and after)
        # (position, deal, cards): when each deal had seen each number of its cards.
        self.reach: list[tuple[int, DealTruth, int]] = []
        for k, deal in enumerate(order):
            for m in range(deal.state.ply + 1):
                placed = 2 * sum(
                    1
                    for d, ply, _ in events
                    if d is not None and (number[d] < k or (d == deal.pk and ply < m))
                )
                at = joined + (DEAL_CARDS + 1) * k + 1 + m + before_deals + placed
                self.reach.append((at, deal, m))
        ended = match.status in (MatchStatus.FINISHED, MatchStatus.ABORTED)
        cards = (DEAL_CARDS + 1) * (len(order) - 1) + 1 + order[-1].state.ply if order else 0
        self.now = joined + cards + int(ended) + int(rated) + 2 * len(events)
        found = selectors.match_version(match_id=match.pk)
        assert found is not None, match.pk
        assert self.now == _service_position(found[1]), ("timeline", self.now, found[1])
        self.end = self.now - int(rated) - after_end if ended else None

    def at(self, position: int) -> Moment:
        assert 0 <= position <= self.now, ("a position the match has not reached", position)
        last = self.reach[-1] if self.reach else None
        if self.end is not None and position >= self.end:  # over: every deal open
            deal, moves = (last[1], last[2]) if last else (None, 0)
            moment = Moment(self.truth, position, deal, moves)
            moment.deals = dict(self.truth.deals)
            moment.active = None
            moment.active_seeds = self.truth.active_seeds
            return moment
        current = None
        for reached in self.reach:
            if reached[0] > position:
                break
            current = reached
        if current is None:  # before the first deal: nothing dealt
            return Moment(self.truth, position, None, 0)
        return Moment(self.truth, position, current[1], current[2])


def _service_position(version: tuple[Any, ...]) -> int:
    from games.live.events import position

    return position(version)


# --- Searching a body ----------------------------------------------------------------------


def json_strings(value: Any) -> Iterator[str]:
    """Every key and string value of decoded JSON."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)
    elif isinstance(value, str):
        yield value


def seed_pieces(seeds: tuple[str, ...], size: int = SEED_PIECE) -> frozenset[str]:
    pieces = set()
    for seed in seeds:
        seed = seed.lower()
        pieces.add(seed)
        pieces.update(seed[i : i + size] for i in range(len(seed) - size + 1))
    return frozenset(pieces)


def split_headers(header_text: str) -> tuple[str, str]:
    """Headers as searched (:func:`headers_of`) split into the lines of ``DIGEST_HEADERS``
    and the rest."""
    plain, digests = [], []
    for line in header_text.split("\n"):
        name = line.partition(":")[0].strip().lower()
        (digests if name in DIGEST_HEADERS else plain).append(line)
    return "\n".join(plain), "\n".join(digests)


@dataclass
class Body:
    """A response split into what is searched as text and the JSON payload it carries."""

    texts: list[str]
    payload: Any = None
    has_payload: bool = False
    whole: list[str] = field(default_factory=list)  # everything, for the seed search


def split_body(content_type: str, text: str, headers: str) -> Body:
    if content_type.startswith("application/json"):
        payload = json.loads(text)
        return Body([headers], payload, True, [text, headers, "\x00".join(json_strings(payload))])
    if content_type.startswith("text/html"):
        unescaped = html.unescape(text)
        match = PRE_BLOCK.search(text)
        if match is not None:
            block = match.group("meta")
            meta, _, content = block.rpartition("</span>")
            try:
                payload = json.loads(html.unescape(TAG.sub("", content)))
            except json.JSONDecodeError:
                payload, ok = None, False
            else:
                ok = True
            if ok:
                outside = text[: match.start()] + meta + text[match.end() :]
                return Body(
                    [headers, outside, html.unescape(outside)],
                    payload,
                    True,
                    [text, unescaped, headers, "\x00".join(json_strings(payload))],
                )
        return Body([headers, text, unescaped], whole=[text, unescaped, headers])
    return Body([headers, text], whole=[text, headers])


def find_leaks(
    texts: list[str],
    secret_cards: frozenset[str],
    seeds: tuple[str, ...],
    whole: list[str],
    digests: str = "",
) -> list[str]:
    """The secret cards in ``texts`` and the pieces of ``seeds`` in ``whole``; ``digests``
    (the lines of ``DIGEST_HEADERS``) is searched for cards and for the seeds' pieces of
    ``DIGEST_SEED_PIECE`` characters."""
    leaks: set[str] = set()
    for text in [*texts, digests]:
        for card in CARD_TOKEN.findall(text):
            if card in secret_cards:
                leaks.add(f"card {card}")
    pieces = seed_pieces(seeds)
    for text in whole:
        _pieces_in(text, pieces, leaks)
    _pieces_in(digests, seed_pieces(seeds, DIGEST_SEED_PIECE), leaks)
    return sorted(leaks)


def _pieces_in(text: str, pieces: frozenset[str], leaks: set[str]) -> None:
    lowered = text.lower()
    for piece in pieces:
        if piece in lowered:
            leaks.add(f"seed piece {piece!r}")


def assert_clean(
    response: Any, what: str, *, secrets: tuple[str, ...], cards: frozenset[str] = frozenset()
) -> None:
    """A response holds no piece of the ``secrets`` (seeds, in pieces of ``SEED_PIECE``
    characters; ``DIGEST_SEED_PIECE`` in the digest headers) anywhere in its text and
    headers, and, if it is JSON, none of the ``cards`` in any key or string. The short
    check for responses that are not about one match's moments (:class:`Audit` is that)."""
    text = response.content.decode("utf-8", "replace")
    header_text, digests = split_headers(headers_of(response))
    texts = [header_text]
    if response.get("Content-Type", "").startswith("application/json"):
        texts.append("\x00".join(json_strings(json.loads(text))))
    leaks = find_leaks(texts, cards, secrets, [text, header_text], digests)
    assert not leaks, f"{what}: {leaks[:3]}"


# --- Public parts: what is shown to be exactly a finished deal's truth is left out ---------


def _codes(cards: Any) -> list[str]:
    return [c.code for c in cards]


def _record_matches(record: Any, deal: DealTruth) -> bool:
    return (
        isinstance(record, dict)
        and record.get("deck") == _codes(deal.state.deck)
        and record.get("moves") == _codes(deal.state.moves)
        and record.get("seed") == deal.seed
    )


def _without(value: Any, keys: Any) -> Any:
    """``value`` but the keys checked: what is left is searched."""
    return {k: v for k, v in value.items() if k not in keys}


def _prefix(deal: DealTruth, ply: int) -> rules.Deal:
    return rules.replay_moves(
        deal.state.players, deal.state.dealer, deal.state.deck, deal.state.moves[:ply]
    )


def _events_match(events: list[Any], expected: list[dict[str, Any]]) -> bool:
    """``events`` are the last ones of ``expected`` (an ``after`` may cut the start); the
    API adds keys (ids, the deal, its number, commitment, seed), the rules' keys agree."""
    if len(events) > len(expected):
        return False
    tail = expected[len(expected) - len(events) :]
    return all(
        isinstance(e, dict) and all(k in e and e[k] == v for k, v in x.items())
        for e, x in zip(events, tail, strict=True)
    )


def _events_rest(events: list[dict[str, Any]], expected: list[dict[str, Any]]) -> list[Any]:
    """Each event without the rules' keys (checked by :func:`_events_match`)."""
    tail = expected[len(expected) - len(events) :]
    return [_without(e, x) for e, x in zip(events, tail, strict=True)]


class PublicParts:
    """Check what a payload holds about a finished deal against its truth, and leave out of
    the search exactly the parts so checked: the rest is returned, to be searched."""

    def __init__(self, truth: Truth) -> None:
        self.truth = truth

    def strip(self, payload: Any, seat: int | None) -> Any:
        if isinstance(payload, dict) and isinstance(payload.get("move"), dict):
            return self._stream_event(payload, seat)
        finished = self.truth.finished
        if not isinstance(payload, dict) or not finished:
            return payload
        if isinstance(payload.get("events"), list):
            kept, by_deal = [], defaultdict(list)
            for event in payload["events"]:
                deal_id = event.get("deal") if isinstance(event, dict) else None
                (by_deal[deal_id] if deal_id in finished else kept).append(event)
            for deal_id, events in by_deal.items():
                expected = self.truth.finished_events(deal_id, seat)
                assert _events_match(events, expected), ("finished deal events", deal_id, events)
                kept.extend(_events_rest(events, expected))
            return {**payload, "events": kept}
        deals = payload.get("deals")
        if (
            isinstance(deals, list)
            and deals
            and all(isinstance(d, dict) and "record" in d for d in deals)
        ):
            rest = []
            for item in deals:  # a match export: the deals that are over
                assert item.get("id") in finished, ("finished deal: exported one not over", item)
                deal = finished[item["id"]]
                assert _record_matches(item["record"], deal), ("finished deal export", item)
                rest.append({**item, "record": _without(item["record"], RECORD_CHECKED)})
            return {**payload, "deals": rest}
        if payload.get("format") == rules.RECORD_FORMAT and "deck" in payload:  # deal export
            deal = next((d for d in finished.values() if d.seed == payload.get("seed")), None)
            assert deal is not None, ("finished deal export: no such deal", payload)
            assert _record_matches(payload, deal), ("finished deal export", payload)
            return _without(payload, RECORD_CHECKED)
        if payload.get("id") in finished and isinstance(payload.get("record"), dict):  # record
            deal = finished[payload["id"]]
            replay = rules.Replay(deal.state, complete=True).to_dict()
            initial = rules.full_view(deal.state).to_dict()["initial_hands"]
            assert _record_matches(payload["record"], deal), ("finished deal record", payload)
            assert payload.get("initial_hands") == initial, ("finished deal hands", payload)
            assert payload.get("tricks") == replay["tricks"], ("finished deal tricks", payload)
            assert payload.get("draws") == replay["draws"], ("finished deal draws", payload)
            rest = _without(payload, ("record", "initial_hands", "tricks", "draws"))
            return {**rest, "record": _without(payload["record"], RECORD_CHECKED)}
        if "position" in payload and isinstance(payload.get("deal"), dict):  # replay
            deal = finished.get(payload["deal"].get("id"))
            if deal is None:
                return payload
            at = _prefix(deal, payload["ply"])
            view = payload["seat"]
            partners = self.truth.match.partners_last_hand
            expected = (
                rules.full_view(at, before_end=True)
                if view is None
                else rules.seat_view(at, view, partners_last_hand=partners)
            ).to_dict()
            assert payload["position"] == expected, ("finished deal replay position", deal.pk)
            steps = rules.deal_events(at, view, before_end=view is None)
            assert isinstance(payload["steps"], list), ("finished deal replay steps", deal.pk)
            assert len(payload["steps"]) == len(steps), ("finished deal replay steps", deal.pk)
            assert _events_match(payload["steps"], steps), ("finished deal replay steps", deal.pk)
            rest = _without(payload, ("position",))
            return {**rest, "steps": _events_rest(payload["steps"], steps)}
        if payload.get("deal") in finished and "checks" in payload:  # verify: no card in it
            assert payload.get("seed") == finished[payload["deal"]].seed, (
                "finished deal verify",
                payload,
            )
            assert payload.get("ok") is True, ("finished deal verify", payload)
        return payload

    def _stream_event(self, payload: dict[str, Any], seat: int | None) -> Any:
        """A stream's event of a card played: its ``move`` names the card, public once
        played (of a deal now over, too, whose cards are all in the next deal's hands):
        left out once it is that deal's card at that ply; the rest is searched."""
        move = payload["move"]
        deal = self.truth.deals.get(move.get("deal"))
        ply = move.get("ply")
        assert deal is not None and isinstance(ply, int), ("stream event move", move)
        assert 0 <= ply < deal.state.ply, ("stream event move: not played", move)
        assert move.get("card") == deal.state.moves[ply].code, ("stream event move", move)
        rest = {**payload, "move": _without(move, ("card",))}
        return {**rest, "detail": self.strip(payload.get("detail"), seat)}

    def strip_text(self, text: str) -> str:
        """Text exports: each ``Deal: <id>`` section of a finished deal names its briscola
        and then its moves, trick by trick, and no other card; such a section is left out
        once so checked (its other words hold no card: it is all checked)."""
        finished = self.truth.finished
        kept = []
        for section in re.split(r"(?m)^(?=Deal: )", text):
            head = re.match(r"Deal: (\d+) ", section)
            deal = finished.get(int(head.group(1))) if head else None
            if deal is None:
                kept.append(section)
                continue
            cards = CARD_TOKEN.findall(section)
            expected = [deal.state.briscola.code, *_codes(deal.state.moves)]
            assert cards == expected, ("finished deal text export", section)
            kept.append(CARD_TOKEN.sub("", section))  # the rest is searched (the seed, too)
        return "".join(kept)


# --- Viewers and the audit -----------------------------------------------------------------


@dataclass
class Viewer:
    name: str
    client: APIClient
    user: User | None = None
    seat: int | None = None
    last_event: int = 0


class Audit:
    """Makes each request, checks the response at once, counts what it checked."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.truth: Truth | None = None
        self.checked = 0
        self.during_deals = 0  # checked while a deal was being played
        self.with_secret_cards = 0
        self.by_label: Counter[str] = Counter()
        self.coverage: set[tuple[str, str, str]] = set()  # (viewer, label, phase)
        self.phases: set[str] = {"setup"}

    def follow(self, match_id: str) -> Truth:
        self.truth = Truth(match_id)
        return self.truth

    def call(
        self,
        viewer: Viewer,
        method: str,
        path: str,
        params: dict[str, Any] | None = None,
        *,
        label: str,
        html_page: bool = False,
        status: int | frozenset[int] | None = 200,
        code: str | None = None,
        echo: str | None = None,
        allow: frozenset[str] = frozenset(),
        headers: dict[str, str] | None = None,
    ) -> Any:
        """One request, checked against the state it was built from: the bots' replies
        (and the rating) it queues for after the commit run only once it is checked.
        ``echo`` is the card the client sent (a refusal may repeat it)."""
        assert self.truth is not None
        headers = dict(headers or {})
        if html_page:
            headers["HTTP_ACCEPT"] = "text/html"
        with self.capture(execute=False) as callbacks:
            if method == "get":
                response = viewer.client.get(path, params, **headers)
            else:
                response = viewer.client.post(path, params, format="json", **headers)
        if method != "get":
            self.truth.refresh()  # the state the response was built from
        if status is not None:
            allowed = {status} if isinstance(status, int) else status
            assert response.status_code in allowed, (
                viewer.name,
                path,
                params,
                response.status_code,
                response.content[:500],
            )
        if echo is not None:
            allow = allow | {echo}
        self.check(viewer, response, label, allow=allow, html_page=html_page)
        if code is not None and not html_page:
            body = response.json()
            assert set(body) == ERROR_KEYS and body["code"] == code, (path, params, body)
        if callbacks:  # the bots' replies and the rating, as after the commit
            with self.capture(execute=True):
                for callback in callbacks:
                    callback()
            self.truth.refresh()
        return response

    def get(
        self, viewer: Viewer, path: str, params: dict[str, Any] | None = None, **kw: Any
    ) -> Any:
        return self.call(viewer, "get", path, params, **kw)

    def check(
        self,
        viewer: Viewer,
        response: Any,
        label: str,
        *,
        allow: frozenset[str] = frozenset(),
        html_page: bool = False,
    ) -> None:
        """Search the response for the cards ``viewer`` may not know now (but ``allow``)
        and for pieces of the seeds of the deals being played."""
        truth = self.truth
        assert truth is not None
        content_type = response.get("Content-Type", "")
        text = response.content.decode()
        header_text = headers_of(response)
        kind = "html" if html_page else "json"
        self._search(truth, viewer, content_type, text, header_text, f"{kind} {label}", allow)

    def _search(
        self,
        truth: Secrets,
        viewer: Viewer,
        content_type: str,
        text: str,
        header_text: str,
        label: str,
        allow: frozenset[str] = frozenset(),
    ) -> None:
        """The one search of everything that leaves the server: a response, or one event
        of a stream (its other lines as the "headers"), against ``truth``'s secrets."""
        secret = truth.hidden(viewer.seat) - allow
        header_text, digests = split_headers(header_text)
        body = split_body(content_type, text, header_text)
        public = PublicParts(truth)
        if body.has_payload:
            stripped = public.strip(body.payload, viewer.seat)
            texts = [*body.texts, "\x00".join(json_strings(stripped))]
        else:  # the first text is the headers
            texts = [body.texts[0], *(public.strip_text(t) for t in body.texts[1:])]
        leaks = find_leaks(texts, secret, truth.active_seeds, body.whole, digests)
        assert not leaks, (viewer.name, label, leaks, text[:3000])
        if content_type.startswith("text/html"):
            # The pages show no card-like token of their own (CSS, words, scripts): every
            # code in a page is in its JSON payload. So nothing in a page needs allowing.
            outside = body.texts[1:]  # the first is the headers
            assert not {c for t in outside for c in CARD_TOKEN.findall(t)}, (label, text)
        self.checked += 1
        self.during_deals += truth.active is not None
        self.with_secret_cards += bool(secret)
        self.by_label[label] += 1
        for phase in self.phases:
            self.coverage.add((viewer.name, label, phase))

    # -- the live streams (issue 13) --------------------------------------------------------

    def check_stream_head(
        self,
        viewer: Viewer,
        response: Any,
        label: str,
        *,
        account: bool = False,
        truth: Truth | None = None,
    ) -> None:
        """A stream's headers (its body is checked block by block): a match stream's
        against its match's truth now, an account stream's against every card and seed."""
        truth = EVERYTHING if account else (truth or self.truth)
        assert truth is not None
        self._search(truth, viewer, "", "", headers_of(response), f"head {label}")

    def check_stream(
        self, viewer: Viewer, wire: str, block: str, label: str, truth: Truth | None = None
    ) -> dict[str, Any] | None:
        """One block of a match stream as it came (SSE: an event, a comment, ``retry``;
        NDJSON: a line), searched as a response is, against the secrets at the event's id
        (the match's position it leads to: :meth:`Truth.at`). Other blocks are searched
        against the truth now. Returns the event (None: a block with none)."""
        truth = truth or self.truth
        assert truth is not None
        data, other = split_stream_block(wire, block)
        if data is None:
            self._search(truth, viewer, "", other, "", f"{wire} {label}")
            return None
        try:
            event = json.loads(data)
        except ValueError:  # not an event: searched as text, and refused
            self._search(truth, viewer, "", block, "", f"{wire} {label}")
            raise AssertionError(("not a JSON event", block[:300])) from None
        assert isinstance(event, dict) and isinstance(event.get("id"), int), block[:300]
        moment = truth.at(event["id"])
        _check_placed(event, moment)
        self._search(moment, viewer, "application/json", data, other, f"{wire} {label}")
        return event

    def check_account_event(self, viewer: Viewer, wire: str, block: str, label: str) -> Any:
        """One block of an account stream: it names matches, turns and results, never a
        card, and no seed (of any deal, over or not). Returns the event (or None)."""
        data, other = split_stream_block(wire, block)
        self._search(
            EVERYTHING,
            viewer,
            "application/json" if data else "",
            data or other,
            other,
            f"{wire} {label}",
        )
        return json.loads(data) if data is not None else None


def headers_of(response: Any) -> str:
    """A response's headers as searched: each name and value."""
    return "\n".join(f"{k}: {v}" for k, v in response.items())


def split_stream_block(wire: str, block: str) -> tuple[str | None, str]:
    """A stream's block as (its JSON data or None, the rest of its text). SSE: the
    ``data`` lines joined (the event), every other line (``id``, ``event``, comments,
    ``retry``) the rest; NDJSON: the line is the event (an empty line, a heartbeat)."""
    if wire == "text/event-stream":
        data, other = [], []
        for line in block.split("\n"):
            name, colon, value = line.partition(":")
            if name == "data" and colon:
                data.append(value.removeprefix(" "))
            else:
                other.append(line)
        return ("\n".join(data) if data else None), "\n".join(other)
    return (block if block.strip() else None), ("" if block.strip() else block)


def _check_placed(event: dict[str, Any], moment: Moment) -> None:
    """An event's detail is the match at its id: its current deal and cards are the
    moment's (else the event would be checked against another moment)."""
    detail = event.get("detail")
    deal = detail.get("current_deal") if isinstance(detail, dict) else None
    if isinstance(deal, dict) and moment.deal is not None:
        assert (deal.get("id"), deal.get("ply")) == (moment.deal.pk, moment.moves), (
            "an event's detail is not the match at its id",
            event["id"],
            deal.get("id"),
            deal.get("ply"),
            moment.deal.pk,
            moment.moves,
        )


class _Everything(Secrets):
    """For the account streams: every card is secret, and every seed of every deal."""

    def __init__(self) -> None:
        self.deals = {}
        self.active = None
        self._hidden = {}
        self._events = {}

    @property
    def active_seeds(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(Deal.objects.values_list("seed", flat=True))

    def hidden(self, seat: int | None) -> frozenset[str]:
        return EVERY_CARD


EVERYTHING = _Everything()
