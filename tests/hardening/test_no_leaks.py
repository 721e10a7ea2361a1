"""No response of the public HTTP API shows a player a card it may not know, or a seed.

docs/rules.md, "What each seat may know": during a deal a seat knows its own hand, the face-up
briscola, the cards played, and (4 players, option on, stock empty) its partner's hand;
nothing else -- not the other hands, not the stock, not the seed. Once a deal ends,
everything about it is open to the match's players (to everyone if the match is public).

Two whole matches are played through the API only (token-authenticated ``APIClient``s,
with a session as well for the ``/replay/<deal id>/`` page, a plain Django view):

- a private, rated 2-player ``first_to_2`` between two people (two deals or more), and
- a public, rated 4-player ``single`` deal, three people and a greedy bot, partners' last
  hand on, watched as well by a signed-in stranger and an anonymous visitor.

Before every move every seat reads the match, the events since its last id and its own
replay (the outsiders: every other ply). At the phases of each deal -- the first ply the
people see (a bot may lead), mid-deal (ply 20), the ply the stock runs out, the last ply
the people see, and after the deal ends (the next deal's start, the match end) -- every
viewer calls every endpoint it may: the match list (with its filters, and every page at
``page_size=1``), all events and several ``after`` values, the deal record, the replay
(own seat at several plies -- every ply once, when the first deal's stock runs out --, the
other seats, the whole table, beyond the present, bad values), verify, export (json and
text), the match export (json and text), the player endpoints, the leaderboard, and the
same GETs with ``Accept: text/html`` (DRF's browsable API; not at the stock phase, to save
time) and the replay page; every finished deal's record, replays, verify, exports and
pages once it is over. Refused moves (stale ply, not your turn, cards not in hand, invalid
cards, no ply, outsiders) are tried at each phase, every 10th ply and at each seat's first
turn of each deal; at each phase the move itself is sent with an ``Idempotency-Key``, then
retried (the stored response comes back), reused with another body, and tried by the
others with the same key.

Each response is checked as it arrives by the one detector, :mod:`leak_audit` (its
docstring says what is secret and how every body is searched: JSON keys and values,
headers, HTML with its entities unescaped, finished-deal content checked against its truth
and the rest searched), against the server's truth at the moment it was built: bots'
replies and the rating are queued for after the commit and run only once the response is
checked. A refused move may repeat the card the client sent (``card_not_in_hand``): that
code is allowed in that one response, and the refusals for a card of another hand, of the
stock, one played and the briscola must be identical but for the code (no oracle for where
a card is). The ``invalid_card`` message holds fixed example codes (``'Ad'``, ``'3b'``):
its body must equal what the rules engine says of the string sent, whatever the deal.

The tests count what they checked (thousands of responses), that most checks made during
a deal had secrets to look for, and that every seat asked every endpoint at every phase.
``test_leak_detector.py`` proves the detector: a planted leak of every kind is caught, and
``bench/audit_mutations.py`` shows each weakening of the detector makes that proof fail.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from django.http import HttpResponse
from leak_audit import (
    CARD_TOKEN,
    Audit,
    Capture,
    DealTruth,
    Viewer,
    assert_clean,
)
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import User
from games import rules
from games.models import Deal, Match, MatchStatus

# The longest tests of the suite: run beside the processes' tests (tests/lanes.py).
pytestmark = [pytest.mark.django_db, pytest.mark.side_lane]

API = "/api/v1"


# --- The calls each viewer makes ----------------------------------------------------------


def _normalized(body: Any, card: str) -> str:
    """A refusal's body with the card the client sent replaced: the rest must not vary."""
    text = json.dumps(body, sort_keys=True)
    return CARD_TOKEN.sub(lambda m: "<CARD>" if m.group(1) == card else m.group(1), text)


NOT_AUTHENTICATED = (401, "not_authenticated")
# An anonymous visitor and a public match's deal record: refused while the deal is played
# (401, or 403 deal_not_over where the record is open to anonymous visitors once over).
ANONYMOUS_REFUSED = (frozenset({401, 403}), None)
DEAL_NOT_OVER = (403, "deal_not_over")
SEAT_FORBIDDEN = (403, "replay_seat_forbidden")
INVALID_INPUT = (400, "invalid_input")


class Table:
    """A match being played through the API, and everything its viewers may ask."""

    def __init__(
        self,
        audit: Audit,
        match_id: str,
        people: list[User],
        seed: int,
    ) -> None:
        self.audit = audit
        self.match_id = match_id
        self.people = people  # every account at the table, bots included
        self.rng = random.Random(seed)  # the refused moves' cards
        self.play_rng = random.Random(seed)  # the cards played: not moved by the probing
        self.truth = audit.follow(match_id)
        # The first ply with the stock empty: after trick 17 (2 players) or 7 (4 players).
        self.stock_empty_at = 34 if self.truth.match.players == 2 else 28
        self.probes: Counter[str] = Counter()
        self.partner_views = 0

    @property
    def match_url(self) -> str:
        return f"{API}/matches/{self.match_id}"

    @property
    def public(self) -> bool:
        return self.truth.match.public

    def get(self, v: Viewer, path: str, params: Any = None, **kw: Any) -> Any:
        expect = kw.pop("expect", (200, None))
        return self.audit.get(v, path, params, status=expect[0], code=expect[1], **kw)

    def signed_in(self, v: Viewer) -> tuple[int, str | None]:
        """The answer of an endpoint that needs an account."""
        return (200, None) if v.user is not None else NOT_AUTHENTICATED

    def finished_record(self, v: Viewer) -> tuple[int | frozenset[int], str | None]:
        """A finished deal's record: a public match's is open, to anonymous visitors too
        where the record API allows them (401 where it needs an account)."""
        return (200, None) if v.user is not None else (frozenset({200, 401}), None)

    # -- every ply ------------------------------------------------------------------------

    def cheap(self, v: Viewer) -> Any:
        """Match detail, the events since the last one seen, the viewer's own replay."""
        active = self.truth.active
        if v.user is None:
            self.get(v, self.match_url, label="match detail", expect=NOT_AUTHENTICATED)
        else:
            detail = self.get(v, self.match_url, label="match detail").json()
            if (detail["current_deal"] or {}).get("partner_hand"):
                self.partner_views += 1
            url = f"{self.match_url}/events"
            events = self.get(v, url, {"after": v.last_event}, label="events since").json()
            v.last_event = events["last_id"]
        if active is None:
            last = max(self.truth.deals.values(), key=lambda d: d.number)
            self.replay(v, {"seat": v.seat or 0}, label="replay own seat", deal=last.pk)
        elif v.seat is not None:
            self.replay(v, {"seat": v.seat}, label="replay own seat")
        else:
            self.replay(v, {"seat": 0}, label="replay (current) refused", expect=DEAL_NOT_OVER)
        return None if v.user is None else detail

    def replay(
        self,
        v: Viewer,
        params: dict[str, Any],
        *,
        label: str,
        deal: int | None = None,
        expect: tuple[int, str | None] = (200, None),
        html_page: bool = False,
    ) -> Any:
        if deal is None:
            assert self.truth.active is not None
            deal = self.truth.active.pk
        url = f"{API}/deals/{deal}/replay"
        return self.get(v, url, params, label=label, expect=expect, html_page=html_page)

    # -- sampled plies --------------------------------------------------------------------

    def lists(self, v: Viewer) -> None:
        url = f"{API}/matches"
        if v.user is None:
            self.get(v, url, label="match list", expect=NOT_AUTHENTICATED)
            return
        self.get(v, url, label="match list")
        for key, value in (("mine", "true"), ("status", "active"), ("open", "true")):
            self.get(v, url, {key: value}, label=f"match list {key}")
        page: str | None = f"{url}?page_size=1"
        pages = 0
        while page is not None:
            page = self.get(v, page, label="match list page_size=1, every page").json()["next"]
            pages += 1
            assert pages < 10
        assert pages >= 2  # there is more than one match to page through
        self.get(v, url, {"page_size": 0}, label="match list bad page", expect=INVALID_INPUT)

    def all_events(self, v: Viewer) -> None:
        url = f"{self.match_url}/events"
        if v.user is None:
            self.get(v, url, label="events all", expect=NOT_AUTHENTICATED)
            return
        last = self.get(v, url, label="events all").json()["last_id"]
        for after in sorted({0, max(0, last - 5), last}):
            self.get(v, url, {"after": after}, label="events after")
        self.get(v, url, {"after": "x"}, label="events bad after", expect=INVALID_INPUT)

    def active_deal(self, v: Viewer, *, every_ply: bool) -> None:
        """The current deal's record, verify, exports (refused), its replays: refused but
        the viewer's own, up to the present."""
        active = self.truth.active
        assert active is not None
        n, present, deal = self.truth.match.players, active.state.ply, active.pk
        record = ANONYMOUS_REFUSED if v.user is None else DEAL_NOT_OVER
        self.get(v, f"{API}/deals/{deal}", label="deal record (current)", expect=record)
        for endpoint, params in (
            ("verify", None),
            ("export", None),
            ("export", {"format": "json"}),
            ("export", {"format": "text"}),
        ):
            label = f"deal {endpoint} (current) {params or ''}".strip()
            self.get(v, f"{API}/deals/{deal}/{endpoint}", params, label=label, expect=DEAL_NOT_OVER)
        if v.seat is None:
            for params in ({}, {"seat": 1}, {"seat": 1, "ply": 0}, {"ply": present}):
                self.replay(v, params, label="replay (current) refused", expect=DEAL_NOT_OVER)
            return
        seat = v.seat
        plies = range(present + 1) if every_ply else sorted({0, present // 2, present})
        for ply in plies:
            self.replay(v, {"seat": seat, "ply": ply}, label="replay own seat at ply")
        beyond = (403, "replay_beyond_present")
        self.replay(v, {"seat": seat, "ply": present + 1}, label="replay beyond", expect=beyond)
        for other in range(n):
            if other != seat:
                for params in ({"seat": other}, {"seat": other, "ply": 0}):
                    self.replay(v, params, label="replay other seat", expect=SEAT_FORBIDDEN)
        for params in ({}, {"ply": 0}, {"ply": present}):
            self.replay(v, params, label="replay whole table", expect=SEAT_FORBIDDEN)
        for params in (
            {"seat": seat, "ply": 41},
            {"seat": seat, "ply": -1},
            {"seat": n},
            {"seat": "x"},
        ):
            self.replay(v, params, label="replay bad params", expect=INVALID_INPUT)

    def finished_deals(self, v: Viewer, deals: list[DealTruth], *, with_html: bool) -> None:
        """Deals that are over: open to the players (to everyone if the match is public)."""
        n = self.truth.match.players
        if v.user is None and not self.public:
            for deal in deals:
                for endpoint in ("replay", "verify", "export"):
                    url = f"{API}/deals/{deal.pk}/{endpoint}"
                    self.get(v, url, label="finished refused", expect=NOT_AUTHENTICATED)
            return
        for deal in deals:
            url = f"{API}/deals/{deal.pk}"
            self.get(v, url, label="deal record (finished)", expect=self.finished_record(v))
            for params in ({}, {"ply": 0}, {"ply": 20}, *({"seat": s} for s in range(n))):
                self.replay(v, params, label="replay (finished)", deal=deal.pk)
            self.replay(v, {"seat": 1, "ply": 13}, label="replay (finished)", deal=deal.pk)
            self.get(v, f"{url}/verify", label="deal verify (finished)")
            for params in (None, {"format": "json"}, {"format": "text"}):
                label = f"deal export (finished) {params or ''}".strip()
                self.get(v, f"{url}/export", params, label=label)
            if with_html:
                self.get(
                    v,
                    url,
                    label="deal record (finished)",
                    html_page=True,
                    expect=(self.finished_record(v)[0], None),
                )
                self.replay(v, {}, label="replay (finished)", deal=deal.pk, html_page=True)
                self.replay(v, {"seat": 0}, label="replay (finished)", deal=deal.pk, html_page=True)
                self.get(v, f"{url}/verify", label="deal verify (finished)", html_page=True)
                self.get(v, f"/replay/{deal.pk}/", label="replay page (finished)", html_page=True)

    def match_export(self, v: Viewer) -> None:
        expect = NOT_AUTHENTICATED if v.user is None and not self.public else (200, None)
        url = f"{self.match_url}/export"
        for params in (None, {"format": "json"}, {"format": "text"}):
            label = f"match export {params or ''}".strip()
            self.get(v, url, params, label=label, expect=expect)

    def people_for(self, v: Viewer) -> list[User]:
        """The viewer itself and the next seat's player; the bot too once it is over."""
        n = len(self.people)
        first = v.seat or 0
        picked = [self.people[first], self.people[(first + 1) % n]]
        if "match over" in self.audit.phases:
            picked += [u for u in self.people if u.is_bot and u not in picked][:1]
        return picked

    def players(self, v: Viewer) -> None:
        expect = self.signed_in(v)
        if v.user is not None:
            self.get(v, f"{API}/auth/me", label="auth me")
        for number, user in enumerate(self.people_for(v)):
            base = f"{API}/players/{user.username}"
            self.get(v, base, label="player", expect=expect)
            if number:  # the others' history and matches: the same endpoints as one's own
                continue
            self.get(v, f"{base}/rating-history", label="player rating history", expect=expect)
            page: str | None = f"{base}/matches?page_size=1"
            while page is not None:
                response = self.get(v, page, label="player matches, every page", expect=expect)
                page = response.json()["next"] if v.user is not None else None
        category = "1v1" if self.truth.match.players == 2 else "2v2"
        url = f"{API}/leaderboard"
        self.get(v, url, {"category": category}, label="leaderboard", expect=expect)
        unknown = (404 if v.user is not None else 401, None)
        self.get(v, f"{API}/players/nobody-here", label="player unknown", expect=unknown)

    def pages(self, v: Viewer) -> None:
        """The same GETs as HTML (DRF's browsable API), and the replay page."""
        expect, active = self.signed_in(v), self.truth.active
        html_get = {"html_page": True, "expect": (expect[0], None)}
        self.get(v, self.match_url, label="match detail", **html_get)
        self.get(v, f"{API}/matches", {"page_size": 1}, label="match list", **html_get)
        self.get(v, f"{self.match_url}/events", {"after": 3}, label="events", **html_get)
        self.get(v, f"{API}/leaderboard", label="leaderboard", **html_get)
        user = self.people_for(v)[1]
        self.get(v, f"{API}/players/{user.username}", label="player", **html_get)
        self.get(v, f"{API}/players/{user.username}/matches", label="player matches", **html_get)
        if active is None:
            return
        forbidden = (403, None)
        if v.seat is not None:
            other = (v.seat + 1) % self.truth.match.players
            for params, label, answer in (
                ({"seat": v.seat}, "replay own seat", (200, None)),
                ({"seat": v.seat, "ply": 0}, "replay own seat at ply", (200, None)),
                ({"seat": other}, "replay other seat", forbidden),
                ({}, "replay whole table", forbidden),
            ):
                self.replay(v, params, label=label, html_page=True, expect=answer)
        else:
            self.replay(
                v, {"seat": 0}, label="replay (current) refused", html_page=True, expect=forbidden
            )
        url = f"{API}/deals/{active.pk}"
        record = (ANONYMOUS_REFUSED[0] if v.user is None else 403, None)
        self.get(v, url, label="deal record (current)", html_page=True, expect=record)
        self.get(
            v, f"{url}/verify", label="deal verify (current)", html_page=True, expect=forbidden
        )
        self.get(
            v, f"{url}/export", label="deal export (current)", html_page=True, expect=forbidden
        )
        page = f"/replay/{active.pk}/"
        if v.user is None:  # sent to log in
            self.get(v, page, label="replay page (current)", html_page=True, expect=(302, None))
            return
        self.get(v, page, label="replay page (current)", html_page=True)
        if v.seat is not None:
            self.get(v, page, {"seat": v.seat}, label="replay page (current)", html_page=True)

    # -- refused moves --------------------------------------------------------------------

    def refusals(
        self, mover: Viewer, waiters: list[Viewer], outsiders: list[Viewer], *, thorough: bool
    ) -> None:
        """Moves the server refuses: their bodies name no secret card, and do not depend
        on where the card sent is (another hand, the stock, the table)."""
        active = self.truth.active
        assert active is not None and mover.seat is not None
        state, ply = active.state, active.state.ply
        moves = f"{self.match_url}/moves"
        hidden = sorted(self.truth.hidden(mover.seat))
        own = [c.code for c in state.hands[mover.seat]]

        def family(
            viewer: Viewer, cards: list[str], sent_ply: int, answer: tuple[int, str]
        ) -> None:
            seen = {}
            for card in cards:
                body = self.audit.call(
                    viewer,
                    "post",
                    moves,
                    {"card": card, "ply": sent_ply},
                    label=f"move refused {answer[1]}",
                    status=answer[0],
                    code=answer[1],
                    echo=card,
                ).json()
                seen[card] = _normalized(body, card)
            assert len(set(seen.values())) <= 1, (answer, seen)
            self.probes[answer[1]] += len(cards)

        picks = [own[0], *self.rng.sample(hidden, min(2, len(hidden)))]
        for stale in (ply - 1, ply + 1) if thorough else (ply + 1 if ply < 39 else ply - 1,):
            if 0 <= stale <= 39:
                family(mover, picks, stale, (409, "stale_ply"))
        # Not in the hand: a card of each other hand, of the stock, one played, the briscola.
        elsewhere = [
            self.rng.choice(state.hands[s]).code
            for s in range(state.players)
            if s != mover.seat and state.hands[s]
        ]
        stock = [c.code for c in state.stock if c is not state.briscola]
        if stock:
            elsewhere.append(self.rng.choice(stock))
        if state.moves:
            elsewhere.append(self.rng.choice(state.moves).code)
        if state.briscola.code not in own:
            elsewhere.append(state.briscola.code)
        family(mover, elsewhere, ply, (400, "card_not_in_hand"))
        for waiter in waiters:
            assert waiter.seat is not None
            theirs = [c.code for c in state.hands[waiter.seat]][:1]
            others = sorted(self.truth.hidden(waiter.seat))
            cards = theirs + self.rng.sample(others, min(2, len(others)))
            family(waiter, cards, ply, (409, "not_your_turn"))
        for card in ("Zz", "A"):
            # The message is a fixed text with example codes ('Ad', '3b'): the body must be
            # exactly what the rules engine says of that string, whatever the position.
            with pytest.raises(rules.InvalidCardError) as refused:
                rules.Card.from_code(card)
            error = refused.value
            body = self.audit.call(
                mover,
                "post",
                moves,
                {"card": card, "ply": ply},
                label="move refused invalid card",
                status=400,
                code="invalid_card",
                allow=frozenset(CARD_TOKEN.findall(error.message)),
            ).json()
            assert body == {"code": error.code, "message": error.message, "details": error.details}
        self.audit.call(
            mover,
            "post",
            moves,
            {"card": own[0]},
            label="move refused without ply",
            status=400,
            code="invalid_input",
        )
        for outsider in outsiders:
            answer = NOT_AUTHENTICATED if outsider.user is None else (403, "not_a_player")
            family(outsider, hidden[:2], ply, answer)  # type: ignore[arg-type]


# --- Playing a match ----------------------------------------------------------------------


def phases_now(state: rules.Deal, people: set[int], stock_empty_at: int) -> set[str]:
    """The phases of the deal at this ply, as the people see it (a bot's turn is not
    seen: its reply comes within the move before), each first met at or after its ply."""
    n, ply = state.players, state.ply
    phases = {"first ply"}
    if ply >= 20:
        phases.add("mid-deal")
    if ply >= stock_empty_at:
        phases.add("stock runs out")
    last_trick = 40 - n
    if ply >= last_trick:
        leader = state.leader
        seats = {p: (leader + p - last_trick) % n for p in range(last_trick, 40)}
        if ply == max(p for p, s in seats.items() if s in people):
            phases.add("last ply")
    return phases


def play(table: Table, seated: dict[int, Viewer], outsiders: list[Viewer]) -> None:
    """Play the match out; before each move every viewer looks at what it may."""
    audit, truth, rng = table.audit, table.truth, table.play_rng
    viewers = [*seated.values(), *outsiders]
    moves = f"{table.match_url}/moves"
    finished_seen: set[int] = set()
    deal_seen, probed, done = 0, set(), set()
    for _ in range(500):
        if truth.match.status != MatchStatus.ACTIVE:
            break
        active = truth.active
        assert active is not None
        state, ply = active.state, active.state.ply
        if active.pk != deal_seen:  # a new deal: its first ply the people see (a bot may lead)
            deal_seen, probed, done = active.pk, set(), set()
        phases = phases_now(state, set(seated), table.stock_empty_at) - done
        done |= phases
        just_over = [d for pk, d in truth.finished.items() if pk not in finished_seen]
        if just_over:
            phases.add("after deal end")
        audit.phases = phases or {"every ply"}
        # Every seat at every ply; the outsiders every other ply.
        lookers = viewers if phases or ply % 2 == 0 else list(seated.values())
        details = {v.name: table.cheap(v) for v in lookers}
        if phases:
            for v in viewers:
                table.lists(v)
                table.all_events(v)
                # Every ply once per match, where every seat still has secrets to keep.
                sweep = "stock runs out" in phases and active.number == 1
                table.active_deal(v, every_ply=sweep)
                table.match_export(v)
                table.players(v)
                if "stock runs out" not in phases:
                    table.pages(v)
        for v in viewers:
            table.finished_deals(v, just_over, with_html=True)
        finished_seen.update(d.pk for d in just_over)
        turn = active.state.turn
        assert turn in seated, f"seat {turn} is to play: did a bot not reply?"
        mover = seated[turn]
        if phases or ply % 10 == 5 or turn not in probed:  # each seat in each deal, too
            probed.add(turn)
            waiters = [w for s, w in seated.items() if s != turn]
            table.refusals(mover, waiters, outsiders, thorough=bool(phases))
        view = details[mover.name]["current_deal"]
        assert view["ply"] == ply and view["turn"] == turn and view["legal"], view
        card = rng.choice(view["legal"])
        move = {"card": card, "ply": ply}
        if not phases:
            audit.call(mover, "post", moves, move, label="move played", status=201)
            continue
        # With an Idempotency-Key: the retry answers the stored first response (a past
        # position, checked against the present), and the key is the mover's only.
        key = {"HTTP_IDEMPOTENCY_KEY": f"move-{active.pk}-{ply}"}
        audit.call(mover, "post", moves, move, label="move played", status=201, headers=key)
        retry = audit.call(
            mover, "post", moves, move, label="move retried", status=201, headers=key
        )
        assert retry["Idempotent-Replayed"] == "true"
        other = {"card": card, "ply": (ply + 1) % 40}
        audit.call(
            mover,
            "post",
            moves,
            other,
            label="move key reused",
            status=422,
            code="idempotency_key_reused",
            headers=key,
            echo=card,
        )
        for waiter in [w for s, w in seated.items() if s != turn]:
            answer = audit.call(
                waiter, "post", moves, move, label="move others' key", status=None, headers=key
            )
            assert answer.status_code in (201, 400, 409) and "Idempotent-Replayed" not in answer
    assert truth.match.status == MatchStatus.FINISHED, "the match did not end"

    audit.phases = {"after deal end", "match over"}
    just_over = [d for pk, d in truth.finished.items() if pk not in finished_seen]
    for v in viewers:
        table.cheap(v)
        table.lists(v)
        table.all_events(v)
        table.match_export(v)
        table.players(v)
        table.pages(v)
        table.finished_deals(v, just_over, with_html=True)
    for v in seated.values():
        audit.call(
            v, "post", moves, {"card": "Ad", "ply": 0}, label="move refused match_over", status=409
        )
        # Everything is open to the players now: the seeds are there to read.
        events = audit.get(v, f"{table.match_url}/events", label="events all").json()["events"]
        seeds = {e["seed"] for e in events if e["type"] == "deal_ended"}
        assert seeds == {d.seed for d in truth.deals.values()}


# --- The tests ----------------------------------------------------------------------------


@pytest.fixture
def audit(settings: Any, django_capture_on_commit_callbacks: Capture) -> Audit:
    """Throttles off (thousands of requests a minute here), and the audit."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": None, "user": None},
    }
    return Audit(django_capture_on_commit_callbacks)


@pytest.fixture
def viewer(
    user_factory: Callable[..., User], auth_client: Callable[[User], APIClient]
) -> Callable[..., Viewer]:
    """``viewer("alice")``: an account with a token, and a session for the replay page
    (a Django view); ``viewer(None)``: an anonymous visitor."""

    def make(username: str | None, seat: int | None = None) -> Viewer:
        if username is None:
            return Viewer("anonymous", APIClient())
        user = user_factory(username=username)
        client = auth_client(user)
        client.force_login(user)
        return Viewer(username, client, user, seat)

    return make


def _create(audit: Audit, creator: Viewer, body: dict[str, Any], *, follow: bool) -> str:
    response = creator.client.post(f"{API}/matches", body, format="json")
    assert response.status_code == 201, response.content
    match_id = response.json()["id"]
    if follow:
        audit.follow(match_id)
    audit.check(creator, response, "create")
    return match_id


def _assert_looked(audit: Audit, table: Table, seated: list[Viewer], minimum: int) -> None:
    """Not vacuous: many responses, most with secrets to look for, every endpoint asked by
    every seat at every phase of a deal."""
    assert audit.checked >= minimum, audit.checked
    # Most were made while a deal was played, and most of those had secrets to look for
    # (not: the last ply's mover, with every other card out, or its partner at 4 players).
    assert audit.during_deals >= 0.75 * audit.checked, (audit.during_deals, audit.checked)
    assert audit.with_secret_cards >= 0.8 * audit.during_deals, (
        audit.with_secret_cards,
        audit.during_deals,
    )
    for v in seated:
        by_phase: dict[str, set[str]] = defaultdict(set)
        for name, label, phase in audit.coverage:
            if name == v.name:
                by_phase[phase].add(label)
        refused = {label for labels in by_phase.values() for label in labels if "refused" in label}
        for kind in ("stale_ply", "card_not_in_hand", "not_your_turn", "invalid card"):
            assert f"json move refused {kind}" in refused, (v.name, kind)
        # Who moves and who waits changes from ply to ply: refusals are not per phase.
        core = {label for label in by_phase["last ply"] if not label.startswith("json move")}
        assert len(core) >= 45, sorted(core)
        for phase in ("first ply", "mid-deal", "stock runs out"):
            missing = core - by_phase[phase]
            if phase == "stock runs out":  # no HTML there, to save time
                missing = {label for label in missing if not label.startswith("html ")}
            assert not missing, (v.name, phase, sorted(missing))
        after = by_phase["after deal end"]
        finished = {label for label in after if "(finished)" in label}
        assert len(finished) >= 10, sorted(after)
    for code in ("card_not_in_hand", "not_your_turn", "stale_ply"):
        assert table.probes[code] >= 25, table.probes


def test_a_two_player_match_leaks_nothing(
    audit: Audit, viewer: Callable[..., Viewer], unrelated_seeds: None
) -> None:
    alice, bob = viewer("alice", seat=0), viewer("bob", seat=1)
    body = {"players": 2, "format": "first_to_2", "seats": [{"user": "bob"}], "rated": True}
    match_id = _create(audit, alice, body, follow=True)
    _create(audit, bob, {"players": 2, "seats": ["open"]}, follow=False)  # a second to list
    audit.call(bob, "post", f"{API}/matches/{match_id}/join", {}, label="join")
    assert alice.user is not None and bob.user is not None
    table = Table(audit, match_id, [alice.user, bob.user], seed=2)
    play(table, {0: alice, 1: bob}, [])
    report(audit, table)
    assert len(table.truth.deals) >= 2
    _assert_looked(audit, table, [alice, bob], 1500)


def test_a_four_player_match_leaks_nothing(
    audit: Audit, viewer: Callable[..., Viewer], unrelated_seeds: None
) -> None:
    carol, dave, erin = viewer("carol", seat=0), viewer("dave", seat=1), viewer("erin", seat=2)
    stranger, anonymous = viewer("sam"), viewer(None)
    body = {
        "players": 4,
        "format": "single",
        "seats": [{"user": "dave"}, "open", {"bot": "greedy"}],
        "public": True,
        "rated": True,
    }
    match_id = _create(audit, carol, body, follow=True)
    _create(audit, stranger, {"players": 2, "seats": ["open"]}, follow=False)
    audit.call(dave, "post", f"{API}/matches/{match_id}/join", {}, label="join")
    audit.call(erin, "post", f"{API}/matches/{match_id}/join", {"seat": 2}, label="join")
    bot = Match.objects.get(pk=match_id).seats.get(number=3).user
    assert bot is not None and bot.is_bot
    people = [u for u in (carol.user, dave.user, erin.user, bot) if u is not None]
    table = Table(audit, match_id, people, seed=4)
    play(table, {0: carol, 1: dave, 2: erin}, [stranger, anonymous])
    report(audit, table)
    assert table.partner_views > 0  # the partners' last hand was shown, and allowed for
    _assert_looked(audit, table, [carol, dave, erin], 1500)


def report(audit: Audit, table: Table) -> None:
    print(
        f"\n{audit.checked} responses checked, {audit.during_deals} during deals,"
        f" {audit.with_secret_cards} with secret cards"
    )
    print(f"deals: {len(table.truth.deals)}, probes: {dict(table.probes)}")
    for label, count in sorted(audit.by_label.items()):
        print(f"  {count:5d}  {label}")


# --- Time limits, invitations, rematches (games.clocks, issue 14): their own block ---------


def test_the_clock_routes_leak_nothing(
    audit: Audit, viewer: Callable[..., Viewer], unrelated_seeds: None
) -> None:
    """A timed 2-player match between people: the invitation listed, every new route
    refused to each seat mid-deal, a seat timing out and the timeout bot playing for it;
    each seat reads the match, its events and the invitations after each step."""
    from games.clocks.services import deadlines_sweep
    from games.matches.selectors import deal_state
    from games.matches.services import move_play
    from tests.clocks.conftest import db_travel

    alice, bob = viewer("alice", seat=0), viewer("bob", seat=1)
    body = {
        "players": 2,
        "seats": [{"user": "bob"}],
        "time_control": {"per_move_seconds": 10},
        "on_timeout": "bot",
    }
    match_id = _create(audit, alice, body, follow=True)
    audit.call(bob, "get", f"{API}/invitations", label="invitations")
    audit.call(bob, "post", f"{API}/matches/{match_id}/join", {}, label="join")
    url = f"{API}/matches/{match_id}"
    seats = {0: alice, 1: bob}

    def look() -> None:
        for v in seats.values():
            audit.call(v, "get", url, label="detail")
            audit.call(v, "get", f"{url}/events", label="events")
            audit.call(v, "get", f"{API}/invitations", label="invitations")

    for v in seats.values():
        for path, status, code in (
            ("return", 409, "seat_not_left"),
            ("rematch", 409, "match_not_finished"),
            ("decline", 403, "not_invited"),
            ("leave", 409, "cannot_leave"),
        ):
            audit.call(v, "post", f"{url}/{path}", {}, label=path, status=status, code=code)
    deal = Deal.objects.get(match_id=match_id)
    for _ in range(3):  # each seat plays its first card (no abort), then one times out
        state = deal_state(deal)
        assert state.turn is not None and seats[state.turn].user is not None
        user = seats[state.turn].user
        move_play(match_id=match_id, user=user, card=state.legal_moves()[0].code, ply=state.ply)
    assert audit.truth is not None
    audit.truth.refresh()
    look()
    db_travel(match_id, 11)
    with audit.capture(execute=True):
        assert deadlines_sweep() == 1
    audit.truth.refresh()
    look()
    assert "seat_timed_out" in {
        e["type"] for e in alice.client.get(f"{url}/events").json()["events"]
    }


# =============================================================================================
# Issue 19: a staff member seated at a table, and the bots' seeds.
#
# A block of its own, on the audit's short check (leak_audit.assert_clean): a response must
# hold no seed piece (``SEED_PIECE`` characters of a live deal's seed, or of a bot
# decision's seed, in any letter case; ``DIGEST_SEED_PIECE`` in the request id and the
# ETag) anywhere in its text and headers, and a JSON response no card the viewer's seat
# may not know.
# =============================================================================================


@pytest.mark.usefixtures("unrelated_seeds")
def test_a_staff_member_seated_at_a_table_sees_only_their_seat(
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
    games: Any,
    settings: Any,
) -> None:
    """Issue 19, item 6: mid-deal, ``GET /deals/{id}`` gave a seated staff member the seed
    and every hand, ``/replay`` the opponent's hand and the stock. Every endpoint a player
    may call, the replay page and the admin's pages of the match, as the seated staff
    member: nothing of the other hand, the stock or the seed. An administrator who does
    not play sees the seed in the admin only when asked (the detector fires on it)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    alice = user_factory(username="alice")
    root = user_factory(username="root", is_staff=True, is_superuser=True)
    other_admin = user_factory(username="warden", is_staff=True, is_superuser=True)
    match = games.person_match(alice, root)
    games.play(match, 5)
    deal = games.current_deal(match)
    state = games.state(deal)
    assert state.turn is not None and state.stock
    seat = next(s.number for s in match.seats.all() if s.user_id == root.pk)
    secret_cards = {c.code for c in state.hands[1 - seat]} | {c.code for c in state.stock}
    secret_cards.discard(state.briscola.code)
    alices_token = Token.objects.get_or_create(user=alice)[0].key
    secrets = (deal.seed, alices_token)
    client = auth_client(root)
    client.force_login(root)
    api = f"/api/v1/matches/{match.pk}"
    urls = [
        api,
        f"{api}/events",
        f"{api}/events?after=3",
        f"{api}/export",
        f"{api}/export?format=text",
        f"{api}/export.txt",
        f"/api/v1/deals/{deal.pk}",
        f"/api/v1/deals/{deal.pk}/replay",
        f"/api/v1/deals/{deal.pk}/replay?seat={1 - seat}",
        f"/api/v1/deals/{deal.pk}/replay?seat={seat}",
        f"/api/v1/deals/{deal.pk}/replay?seat={seat}&ply=2",
        f"/api/v1/deals/{deal.pk}/replay?seat={seat}&ply=40",
        f"/api/v1/deals/{deal.pk}/verify",
        f"/api/v1/deals/{deal.pk}/export",
        f"/api/v1/deals/{deal.pk}/export?format=text",
        f"/api/v1/deals/{deal.pk}/export.txt",
        f"/api/v1/players/{root.username}/matches",
        "/api/v1/matches?mine=true",
        f"/replay/{deal.pk}/",
        f"/admin/games/deal/{deal.pk}/change/",
        f"/admin/games/deal/{deal.pk}/change/?reveal_live_deal=1",
        f"/admin/games/match/{match.pk}/change/",
        "/admin/games/deal/",
        f"/admin/games/move/?deal__id__exact={deal.pk}",
        "/admin/authtoken/tokenproxy/",  # REST framework's: every key, so every hand
        f"/admin/authtoken/tokenproxy/{alice.pk}/change/",
        f"/admin/accounts/user/{alice.pk}/change/",
    ]
    answered = 0
    for url in urls:
        response = client.get(url)
        assert response.status_code < 500, (url, response.status_code)
        answered += response.status_code == 200
        assert_clean(
            response,
            f"{url} as the seated staff member",
            secrets=secrets,
            cards=frozenset(secret_cards),
        )
    assert answered >= 12  # the reads a player may make answered, not only refusals
    # The admin's change lists filter by any field in the URL: by the seed, whether the
    # list is empty would spell it a character at a time (the security audit found a live
    # seed in 128 requests). Such filters are refused, whatever they match.
    for prefix in {deal.seed[:1], deal.seed[:2], "x", *"0123456789abcdef"}:
        for url in (
            f"/admin/games/deal/?seed__startswith={prefix}",
            f"/admin/games/deal/?id={deal.pk}&seed__gte={prefix}",
            # an account's token, by the primary key of the user's token (the re-audit
            # read 16 characters of one in 64 requests)
            f"/admin/accounts/user/?username=alice&auth_token__key__startswith={prefix}",
            f"/admin/accounts/user/?auth_token__key__regex=^{prefix}",
            f"/admin/accounts/user/?auth_token__pk__startswith={prefix}",
            f"/admin/accounts/user/?access_tokens__key_hash__startswith={prefix}",
        ):
            refused = client.get(url)
            assert refused.status_code == 400, (url, refused.status_code)
            assert_clean(refused, url, secrets=secrets)
    # The seat's own view is there: the detector looks at real bodies.
    own = client.get(f"/api/v1/deals/{deal.pk}/replay?seat={seat}").json()
    assert sorted(own["position"]["hand"]) == sorted(c.code for c in state.hands[seat])

    # An administrator who does not play: the admin hides the seed until asked...
    admin = auth_client(other_admin)
    admin.force_login(other_admin)
    page = admin.get(f"/admin/games/deal/{deal.pk}/change/")
    assert page.status_code == 200
    assert_clean(page, "the admin's deal page, not asked", secrets=secrets)
    assert b"reveal_live_deal=1" in page.content
    # ... and shows it, with a warning, when asked: the detector fires on that page.
    revealed = admin.get(f"/admin/games/deal/{deal.pk}/change/?reveal_live_deal=1")
    assert revealed.status_code == 200 and b"still being played" in revealed.content
    with pytest.raises(AssertionError, match="seed piece"):
        assert_clean(revealed, "revealed on purpose", secrets=secrets)
    # And the API gives the unseated administrator the whole deal, as before.
    whole = admin.get(f"/api/v1/deals/{deal.pk}")
    assert whole.status_code == 200 and whole.json()["seed"] == deal.seed


def test_bot_decision_seeds_never_leave_the_server(
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
    django_capture_on_commit_callbacks: Capture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 19, item 5: the seed of every bot decision is a server secret. A whole match
    against the random and greedy bots (4 players) through the API: no response to the
    person (nor, once public, to a stranger) holds any bot decision's seed or a piece of
    it, and no seed is made of the public values ``deal:ply``."""
    from games.matches import services

    seeds: list[tuple[str, int, str]] = []
    choose = services.choose_card

    def spy(level: str, view: Any, **options: Any) -> Any:
        seeds.append((level, view.ply, options["seed"]))
        return choose(level, view, **options)

    monkeypatch.setattr(services, "choose_card", spy)
    alice = user_factory(username="alice")
    stranger = user_factory(username="stranger")
    client = auth_client(alice)
    responses: list[tuple[str, HttpResponse]] = []

    def get(who: APIClient, url: str) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            response = who.get(url)
        responses.append((url, response))
        assert response.status_code == 200, (url, response.status_code)
        return response.json() if response["Content-Type"].startswith("application/json") else {}

    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(
            "/api/v1/matches",
            {
                "players": 4,
                "public": True,
                "seats": [{"bot": "random"}, {"bot": "greedy"}, {"bot": "random"}],
            },
            format="json",
        )
    responses.append(("create", created))
    match_id = created.json()["id"]
    for _ in range(40):
        detail = get(client, f"/api/v1/matches/{match_id}")
        if detail["status"] != "active":
            break
        deal = detail["current_deal"]
        assert deal["turn"] == 0, "a bot did not reply"
        with django_capture_on_commit_callbacks(execute=True):
            moved = client.post(
                f"/api/v1/matches/{match_id}/moves",
                {"card": deal["legal"][0], "ply": deal["ply"], "deal": deal["id"]},
                format="json",
            )
        responses.append(("move", moved))
        assert moved.status_code == 201, moved.content
    final = get(client, f"/api/v1/matches/{match_id}")
    assert final["status"] == "finished"
    get(client, f"/api/v1/matches/{match_id}/events")
    for who in (client, auth_client(stranger)):
        for summary in final["deals"]:
            for suffix in (
                "",
                "/replay",
                "/verify",
                "/export",
                "/export?format=text",
                "/export.txt",
            ):
                get(who, f"/api/v1/deals/{summary['id']}{suffix}")
        get(who, f"/api/v1/matches/{match_id}/export")
        get(who, f"/api/v1/matches/{match_id}/export.txt")
    assert len(seeds) == 30 and {level for level, _, _ in seeds} == {"random", "greedy"}
    secrets = tuple(seed for _, _, seed in seeds)
    public = {f"{s['id']}:{ply}" for s in final["deals"] for ply in range(40)}
    assert not {seed for _, _, seed in seeds} & public
    for url, response in responses:
        assert_clean(response, url, secrets=secrets)
