"""The secrecy detector (:mod:`leak_audit`) catches a leak wherever it travels, and only a leak.

A first_to_2 match between alice (seat 0) and bob (seat 1) is played through the services
until its first deal is over and its second has begun; a 4-player match checks the partner's
hand. Then bodies are put before the detector as alice sees them:

- planted leaks, one for every way a card or a seed can travel: a JSON value, a key, a
  message, the details of an error, a unicode escape, a header's value and its name, an HTML
  attribute, numeric (decimal and hex) and named entities, the browsable API's block and the
  page around it, plain text; each kind of finished-deal content the API sends (events,
  match export and its deal items and records, deal export, deal record, replay and its
  steps, verify, the text exports), first as the API really sent it and then with a live
  card under an extra key, as a key, or in place of a checked value. Every one must be
  caught, for the reason planted (``card Xx``, ``seed piece``, ``finished deal``);
- the same bodies unplanted, and look-alikes (``Admin``, ``translate3d``, the seat's own
  cards, the briscola, a card the client sent echoed back), which must pass;
- the real match export with the ``peek`` leak planted in it (issue 20: every item given a
  live deal's stock), which must fail.

The live streams' blocks (issue 13) are a further kind: the real blocks of a match stream
pass, and a leak planted in one is caught, at the secrets of the event's id; an account
stream's blocks may hold no card and no seed at all.
``bench/audit_mutations.py`` runs this file against one-line weakenings of the detector.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.http import HttpResponse
from leak_audit import CARD_TOKEN, DIGEST_SEED_PIECE, SEED_PIECE, Audit, Truth, Viewer
from rest_framework.test import APIClient

from accounts.models import User
from games import rules
from games.matches.services import SeatSpec, match_create, match_join
from games.models import Deal, DealStatus, Move
from games.replays import selectors as replays
from tests.live.streams import match_position

pytestmark = pytest.mark.django_db

API = "/api/v1"
REASON = ("card ", "seed piece", "finished deal")


@pytest.fixture
def audit(django_capture_on_commit_callbacks: Any) -> Audit:
    return Audit(django_capture_on_commit_callbacks)


def json_response(data: Any, headers: dict[str, str] | None = None) -> HttpResponse:
    response = HttpResponse(json.dumps(data), content_type="application/json")
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def html_response(page: str) -> HttpResponse:
    return HttpResponse(page, content_type="text/html; charset=utf-8")


def text_response(text: str) -> HttpResponse:
    return HttpResponse(text, content_type="text/plain; charset=utf-8")


def browsable(payload: Any, around: str = "") -> HttpResponse:
    """A page as DRF's browsable API renders one (its response block), ``around`` after it."""
    content = html.escape(json.dumps(payload, indent=4))
    return html_response(
        '<html><body><pre class="prettyprint"><span class="meta nocode"><b>HTTP 200 OK'
        f'</b>\n<b>Allow:</b> <span class="lit">GET</span>\n\n</span>{content}</pre>'
        f"{around}</body></html>"
    )


def caught(audit: Audit, viewer: Viewer, response: Any, allow: frozenset[str]) -> str | None:
    """The detector's complaint about ``response`` (None: it passed)."""
    before = audit.checked
    try:
        audit.check(viewer, response, "planted", allow=allow)
    except AssertionError as error:
        assert audit.checked == before
        return str(error)
    assert audit.checked == before + 1
    return None


def assert_each_caught(cases: dict[str, tuple[Callable[[], str | None], str]]) -> None:
    """Each case's check complains (not None), for the reason planted."""
    missed, wrong_reason = [], []
    for name, (check, reason) in cases.items():
        complaint = check()
        if complaint is None:
            missed.append(name)
        elif reason not in complaint:
            wrong_reason.append((name, reason, complaint[:300]))
    assert not missed, missed
    assert not wrong_reason, wrong_reason


@dataclass
class Scene:
    audit: Audit
    truth: Truth
    alice: Viewer
    bob: Viewer
    first: int  # the finished deal
    bobs: str  # a card in bob's hand
    stock: str  # a card of the stock (not the briscola)
    seed: str  # the live deal's seed

    def api(self, path: str, params: Any = None) -> Any:
        """The response the API really sends alice."""
        response = self.alice.client.get(f"{API}{path}", params)
        assert response.status_code == 200, (path, response.content[:300])
        return response


@pytest.fixture
def scene(
    audit: Audit,
    games: Any,
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
    unrelated_seeds: None,
    django_capture_on_commit_callbacks: Any,
) -> Scene:
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = games.person_match(alice, bob, format="first_to_2")
    # Each move keeps its snapshot once committed, as in production (games.matches
    # .snapshots): a stream resumed in deal 2 rebuilds one event a card from them.
    with django_capture_on_commit_callbacks(execute=True):
        games.play(match, 40)  # deal 1 is over (open), deal 2 is being played
        games.play(match, 5)
    truth = audit.follow(str(match.pk))
    assert truth.active is not None and truth.active.number == 2 and len(truth.finished) == 1
    state = truth.active.state
    bobs = state.hands[1][0].code
    stock = next(c.code for c in state.stock if c is not state.briscola)
    assert {bobs, stock} <= truth.hidden(0) and bobs not in truth.hidden(1)
    return Scene(
        audit,
        truth,
        Viewer("alice", auth_client(alice), alice, seat=0),
        Viewer("bob", auth_client(bob), bob, seat=1),
        next(iter(truth.finished)),
        bobs,
        stock,
        truth.active.seed,
    )


def finished_bodies(s: Scene) -> dict[str, Any]:
    """Each kind of content about the finished deal, as the API sends it to alice."""
    m, d = f"/matches/{s.truth.match_id}", f"/deals/{s.first}"
    events = s.api(f"{m}/events")
    ids = [e["id"] for e in events.json()["events"] if e.get("deal") == s.first]
    return {
        "events": events,
        "events after": s.api(f"{m}/events", {"after": ids[len(ids) // 2]}),
        "match export": s.api(f"{m}/export"),
        "match export text": s.api(f"{m}/export", {"format": "text"}),
        "deal record": s.api(d),
        "deal export": s.api(f"{d}/export"),
        "deal export text": s.api(f"{d}/export", {"format": "text"}),
        "replay": s.api(f"{d}/replay"),
        "replay seat": s.api(f"{d}/replay", {"seat": 0, "ply": 20}),
        "verify": s.api(f"{d}/verify"),
    }


def planted_in_finished(s: Scene, bodies: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    """A live card under an extra key, as a key, or in a checked value of each kind of
    finished-deal content; each with the reason the detector must give."""
    card, wrong = [s.bobs], f"card {s.bobs}"
    finished = "finished deal"

    def body(name: str) -> Any:
        return json.loads(bodies[name].content)

    def first_event(events: list[dict[str, Any]], kind: str = "") -> dict[str, Any]:
        return next(e for e in events if e.get("deal") == s.first and kind in e["type"])

    plants: dict[str, tuple[Any, str]] = {}
    for name in ("events", "events after"):
        data = body(name)
        first_event(data["events"])["peek"] = card
        plants[f"{name}: extra key"] = (data, wrong)
        data = body(name)
        first_event(data["events"])[s.bobs] = 1
        plants[f"{name}: card as a key"] = (data, wrong)
        data = body(name)
        first_event(data["events"], "card_played")["card"] = s.bobs
        plants[f"{name}: checked value"] = (data, finished)
        data = body(name)
        del first_event(data["events"], "card_played")["card"]
        plants[f"{name}: checked key missing"] = (data, finished)
    data = body("match export")
    data["deals"][0]["peek"] = card
    plants["match export: extra key in a deal item"] = (data, wrong)
    data = body("match export")
    data["deals"][0]["record"]["peek"] = card
    plants["match export: extra key in a record"] = (data, wrong)
    data = body("match export")
    data["deals"][0]["record"]["moves"][0] = s.bobs
    plants["match export: checked value"] = (data, finished)
    data = body("match export")
    data["deals"][0]["id"] = s.truth.active.pk if s.truth.active else 0
    plants["match export: a deal not over"] = (data, finished)
    data = body("deal export")
    data["peek"] = card
    plants["deal export: extra key"] = (data, wrong)
    data = body("deal export")
    data["deck"][0], data["deck"][1] = data["deck"][1], data["deck"][0]
    plants["deal export: checked value"] = (data, finished)
    data = body("deal export")
    data["seed"] = "0" * 32
    plants["deal export: no such deal"] = (data, finished)
    data = body("deal record")
    data["peek"] = card
    plants["deal record: extra key"] = (data, wrong)
    data = body("deal record")
    data["record"]["peek"] = card
    plants["deal record: extra key in its record"] = (data, wrong)
    for key in ("initial_hands", "tricks", "draws"):
        data = body("deal record")
        data[key] = data[key][::-1]
        plants[f"deal record: checked {key}"] = (data, finished)
    data = body("deal record")
    data["record"]["moves"] = data["record"]["moves"][::-1]
    plants["deal record: checked record"] = (data, finished)
    for name in ("replay", "replay seat"):
        data = body(name)
        data["peek"] = card
        plants[f"{name}: extra key"] = (data, wrong)
        data = body(name)
        data["steps"][-1]["peek"] = card
        plants[f"{name}: extra key in a step"] = (data, wrong)
        data = body(name)
        data["position"]["peek"] = card
        plants[f"{name}: checked position"] = (data, finished)
        data = body(name)
        data["steps"] = data["steps"][1:]
        plants[f"{name}: a step missing"] = (data, finished)
        data = body(name)
        step = next(e for e in data["steps"] if e["type"] == "card_played")
        step["card"] = s.bobs
        plants[f"{name}: checked step"] = (data, finished)
    data = body("verify")
    data["peek"] = card
    plants["verify: extra key"] = (data, wrong)
    data = body("verify")
    data["seed"] = "0" * 32
    plants["verify: checked seed"] = (data, finished)
    data = body("verify")
    data["ok"] = False
    plants["verify: checked ok"] = (data, finished)
    for name in ("match export text", "deal export text"):
        text = bodies[name].content.decode()
        plants[f"{name}: a card added"] = (text_response(f"{text}\n{s.bobs}\n"), finished)
        tokens = list(CARD_TOKEN.finditer(text))[1:3]  # the first two moves, swapped
        assert len(tokens) == 2 and tokens[0].group() != tokens[1].group()
        (a, b), (c, d) = tokens[0].span(), tokens[1].span()
        swapped = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
        plants[f"{name}: moves swapped"] = (text_response(swapped), finished)
    return plants


def test_a_planted_leak_of_every_kind_is_caught(scene: Scene) -> None:
    s = scene
    bobs, stock, seed = s.bobs, s.stock, s.seed
    piece = seed[3 : 3 + SEED_PIECE]
    hex_entity = f"&#x{ord(bobs[0]):x};{bobs[1]}"
    cases: dict[str, tuple[Any, str]] = {
        "json value": (json_response({"current_deal": {"hand": [bobs]}}), f"card {bobs}"),
        "json key": (json_response({"hands": {bobs: 1}}), f"card {bobs}"),
        "error message": (
            json_response({"code": "x", "message": f"{stock} is not in the hand", "details": {}}),
            f"card {stock}",
        ),
        "error details": (
            json_response({"code": "x", "message": "no", "details": {"card": stock}}),
            f"card {stock}",
        ),
        "escaped in json": (json_response({"message": f"\n{stock}"}), f"card {stock}"),
        "unicode escape": (
            HttpResponse(
                '{"hand": ["\\u' + f'{ord(bobs[0]):04x}{bobs[1]}"]}}',
                content_type="application/json",
            ),
            f"card {bobs}",
        ),
        "header value": (json_response({}, {"X-Hint": f"next {bobs}"}), f"card {bobs}"),
        "header name": (json_response({}, {f"X-{bobs}": "1"}), f"card {bobs}"),
        "html attribute": (html_response(f'<main data-hand="{bobs}"></main>'), f"card {bobs}"),
        "html quoted entity": (html_response(f"<p>&quot;{bobs}&quot;</p>"), f"card {bobs}"),
        "html numeric entity": (
            html_response(f"<p>&#{ord(bobs[0])};{bobs[1]}</p>"),
            f"card {bobs}",
        ),
        "html hex entity in an attribute": (
            html_response(f'<i title="{hex_entity}"></i>'),
            f"card {bobs}",
        ),
        "html named entity": (html_response(f"<p>&lt{bobs}</p>"), f"card {bobs}"),
        "browsable block": (browsable({"hand": [bobs]}), f"card {bobs}"),
        "browsable block key": (browsable({"hands": {bobs: 1}}), f"card {bobs}"),
        "browsable page around the block": (
            browsable({"ok": True}, f"<p>&#{ord(bobs[0])};{bobs[1]}</p>"),
            f"card {bobs}",
        ),
        "browsable header": (
            HttpResponse(browsable({}).content, content_type="text/html", headers={"X-Hint": bobs}),
            f"card {bobs}",
        ),
        "plain text": (text_response(f"Briscola: Rs\n1. {bobs} 2c"), f"card {bobs}"),
        "seed": (json_response({"seed": seed}), "seed piece"),
        "seed as a key": (json_response({seed: 1}), "seed piece"),
        "seed piece, upper case": (json_response({"note": f"x-{piece.upper()}-y"}), "seed piece"),
        "seed piece in a header": (json_response({}, {"X-Hint": piece}), "seed piece"),
        "long seed piece in the etag": (
            json_response({}, {"ETag": f'"{seed[5 : 5 + DIGEST_SEED_PIECE]}"'}),
            "seed piece",
        ),
        "long seed piece in the request id": (
            json_response({}, {"X-Request-ID": seed[1 : 1 + DIGEST_SEED_PIECE]}),
            "seed piece",
        ),
        "card in the etag": (json_response({}, {"ETag": f'"{bobs}"'}), f"card {bobs}"),
        "seed piece in text": (text_response(f"commitment {piece}"), "seed piece"),
        "seed piece in html": (html_response(f"<p data-x='{piece}'></p>"), "seed piece"),
    }
    bodies = finished_bodies(s)
    for name, (data, reason) in planted_in_finished(s, bodies).items():
        cases[f"finished deal, {name}"] = (
            data if isinstance(data, HttpResponse) else json_response(data),
            reason,
        )
        if not isinstance(data, HttpResponse):  # and the same in the browsable API
            cases[f"finished deal, {name} (html)"] = (browsable(data), reason)
    assert_each_caught(
        {
            name: (lambda r=response: caught(s.audit, s.alice, r, frozenset()), reason)
            for name, (response, reason) in cases.items()
        }
    )
    assert len(cases) >= 99
    # A viewer with no seat may know no hand: neither seat's.
    assert s.truth.active is not None
    state = s.truth.active.state
    outsider = Viewer("stranger", APIClient())
    for hand in state.hands:
        card = next(c.code for c in hand if c is not state.briscola)
        complaint = caught(s.audit, outsider, json_response({"c": card}), frozenset())
        assert complaint is not None and f"card {card}" in complaint, card


def test_what_a_seat_may_know_passes(scene: Scene) -> None:
    """The finished deal's content as the API sends it, and the look-alikes, are no leak."""
    s = scene
    assert s.truth.active is not None
    state = s.truth.active.state
    own = [c.code for c in state.hands[0]]
    fine: dict[str, Any] = {
        name: response for name, response in finished_bodies(s).items()
    }  # the real bodies
    for name, response in list(fine.items()):
        if response["Content-Type"].startswith("application/json"):
            fine[f"{name} (html)"] = browsable(response.json())
    fine |= {
        "own hand, briscola, look-alikes": json_response(
            {"hand": own, "briscola": state.briscola.code, "note": "Admin 3dx x3d"}
        ),
        "played cards": json_response({"moves": [c.code for c in state.moves]}),
        "browsable own hand": browsable(
            {"hand": own, "url": "http://testserver/api/v1/matches?page=2"}
        ),
        "page look-alikes": html_response(
            '<div class="card back" style="transform: translate3d(0,0,0)">Asso, Admin</div>'
        ),
        "live match detail": s.api(f"/matches/{s.truth.match_id}"),
        "live replay": s.api(f"/deals/{s.truth.active.pk}/replay", {"seat": 0}),
        # 8 hex digits of the seed inside a random 32-digit request id or ETag digest: by
        # chance about once in 10,000 responses, so not counted there (16 digits are).
        "random digests": json_response(
            {},
            {
                "ETag": f'W/"{"0" * 9}{s.seed[2 : 2 + SEED_PIECE]}{"f" * 15}"',
                "X-Request-ID": f"{'1' * 4}{s.seed[6 : 6 + SEED_PIECE]}{'e' * 20}",
            },
        ),
    }
    for name, response in fine.items():
        assert caught(s.audit, s.alice, response, frozenset()) is None, name
    # A refusal may echo the card sent; bob may see his own card.
    echo = json_response({"message": f"{s.bobs} is not in the hand of seat 0"})
    assert caught(s.audit, s.alice, echo, frozenset({s.bobs})) is None
    assert caught(s.audit, s.alice, echo, frozenset()) is not None
    assert caught(s.audit, s.bob, json_response({"hand": [s.bobs]}), frozenset()) is None
    # A page holds no card-like token outside its JSON block, even a card the seat knows.
    assert caught(s.audit, s.alice, browsable({}, f"<p>{own[0]}</p>"), frozenset()) is not None


def test_the_planted_peek_leak_fails_the_match_export(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20's leak: a ``peek`` of the live deal's stock in each item of the export."""
    s = scene
    url = f"{API}/matches/{s.truth.match_id}/export"
    s.audit.get(s.alice, url, label="match export")  # as it is: no leak
    original = replays.match_export_for_user

    def leaky(**kwargs: Any) -> Any:
        exported = original(**kwargs)
        match = kwargs["match"]
        live = Deal.objects.get(match=match, status=DealStatus.ACTIVE)
        peek = [c.code for c in rules.shuffled_deck(live.seed)[3 * match.players :]]
        for item in exported["deals"]:
            item["peek"] = peek
        return exported

    monkeypatch.setattr(replays, "match_export_for_user", leaky)
    assert s.alice.client.get(url).json()["deals"][0]["peek"]  # the plant is in place
    with pytest.raises(AssertionError, match="card "):
        s.audit.get(s.alice, url, label="match export with peek")
    with pytest.raises(AssertionError, match="card "):
        s.audit.get(s.alice, url, label="match export with peek", html_page=True)


@pytest.mark.parametrize("option", [True, False], ids=["partners on", "partners off"])
def test_the_partners_hand_is_allowed_only_when_the_rules_show_it(
    audit: Audit,
    games: Any,
    user_factory: Callable[..., User],
    unrelated_seeds: None,
    option: bool,
) -> None:
    """4 players: the partner's hand is known once the stock is empty, option on; never an
    opponent's hand, nor the partner's before, nor with the option off."""
    people = [user_factory(username=f"p{i}") for i in range(4)]
    match = match_create(
        creator=people[0],
        players=4,
        format="single",
        seats=[SeatSpec("user", u.username) for u in people[1:]],
        partners_last_hand=option,
    )
    for user in people[1:]:
        match = match_join(match_id=match.pk, user=user)
    viewer = Viewer("p0", APIClient(), people[0], seat=0)
    for plies, shown in ((20, False), (10, option)):  # ply 20: stock left; 30: empty
        games.play(match, plies)
        truth = audit.follow(str(match.pk))
        assert truth.active is not None
        state = truth.active.state
        assert (state.stock_count == 0) is (plies == 10)
        partner = [c.code for c in state.hands[2] if c is not state.briscola]
        opponents = [c.code for s in (1, 3) for c in state.hands[s] if c is not state.briscola]
        assert partner and opponents
        complaint = caught(audit, viewer, json_response({"hand": partner}), frozenset())
        assert (complaint is None) is shown, (plies, option, complaint)
        for card in opponents:
            complaint = caught(audit, viewer, json_response({"hand": [card]}), frozenset())
            assert complaint is not None and f"card {card}" in complaint
        # A viewer with no seat may know no hand.
        for card in partner:
            outsider = Viewer("out", APIClient())
            assert caught(audit, outsider, json_response({"c": card}), frozenset()) is not None


# --- The live streams (issue 13): each block a stream sends -------------------------------


def stream_blocks(s: Scene, wire: str, after: int, who: Viewer | None = None) -> list[str]:
    """The blocks (SSE) or lines (NDJSON) a match stream sends ``who`` (alice) after
    ``after``: served here by the test client (WSGI), it sends what is owed and ends."""
    viewer = who or s.alice
    path = f"{API}/matches/{s.truth.match_id}/stream?after={after}"
    response = viewer.client.get(path, HTTP_ACCEPT=wire)
    assert response.status_code == 200, response.content[:300]
    text = b"".join(response.streaming_content).decode()
    return [b for b in text.split("\n\n" if wire == SSE else "\n") if b]


def caught_stream(s: Scene, wire: str, block: str, account: bool = False) -> str | None:
    """The detector's complaint about one block of a stream (None: it passed)."""
    check = s.audit.check_account_event if account else s.audit.check_stream
    before = s.audit.checked
    try:
        check(s.alice, wire, block, "planted")
    except AssertionError as error:
        return str(error)
    assert s.audit.checked == before + 1
    return None


SSE, NDJSON = "text/event-stream", "application/x-ndjson"


def _sse(event: dict[str, Any], *, id_line: Any = None, event_line: str | None = None) -> str:
    return (
        f"id: {event['id'] if id_line is None else id_line}\n"
        f"event: {event['type'] if event_line is None else event_line}\n"
        f"data: {json.dumps(event)}"
    )


def test_a_planted_leak_in_a_stream_block_is_caught(scene: Scene) -> None:
    """Every block of a match stream, in both formats, is searched as a response is, at
    the secrets of its id: the real blocks pass, and a leak planted anywhere in one (its
    event's detail, its SSE lines, a comment, a card named as played) is caught; so is a
    card that was secret when the event was built though public now, and an event whose
    detail is not the match at its id. An account stream's blocks may name no card at
    all, nor any seed."""
    s = scene
    truth = s.truth
    assert truth.active is not None
    state = truth.active.state
    latest = match_position(truth.match_id)
    start = latest - state.ply  # the position of deal 2's start; 5 cards since
    for wire in (SSE, NDJSON):
        blocks = stream_blocks(s, wire, start - 2)  # deal 1's last card, deal 2's five
        events = [b for b in blocks if "{" in b]
        assert len(events) == 6, blocks
        for block in blocks:
            assert caught_stream(s, wire, block) is None, block
    sse = stream_blocks(s, SSE, start - 2)
    parsed = [json.loads(b.split("data: ", 1)[1]) for b in sse if "data: " in b]
    assert parsed[0]["id"] == start  # deal 1's last card, and deal 2 dealt
    at3 = next(e for e in parsed if e["id"] == start + 3)
    assert at3["move"]["ply"] == 2
    # A card bob played after ply 3: public now, in his hand then.
    later = next(
        card
        for card in Move.objects.filter(deal=truth.active.pk, ply__gte=3, seat=1)
        .order_by("ply")
        .values_list("card", flat=True)
        if card != state.briscola.code
    )
    bobs, piece = s.bobs, s.seed[5 : 5 + SEED_PIECE]
    planted: dict[str, tuple[str, str, str]] = {}

    def plant(name: str, event: dict[str, Any], reason: str, **lines: Any) -> None:
        planted[f"{name} (sse)"] = (SSE, _sse(event, **lines), reason)
        if not lines:
            planted[f"{name} (ndjson)"] = (NDJSON, json.dumps(event), reason)

    leaky = json.loads(json.dumps(at3))
    leaky["detail"]["current_deal"]["hand"].append(bobs)
    plant("a card in the detail", leaky, f"card {bobs}")
    plant("a card as a key", {**at3, bobs: 1}, f"card {bobs}")
    leaky = json.loads(json.dumps(at3))
    leaky["detail"]["current_deal"]["hand"].append(later)
    plant("a card played later, secret at the event's id", leaky, f"card {later}")
    plant("a seed piece", {**at3, "note": piece.upper()}, "seed piece")
    plant("the event line", at3, f"card {bobs}", event_line=f"card_played {bobs}")
    plant("the id line", at3, "seed piece", id_line=f"{at3['id']} {piece}")
    wrong_move = json.loads(json.dumps(at3))
    wrong_move["move"]["card"] = bobs
    plant("a move that was not played", wrong_move, "stream event move")
    ahead = json.loads(json.dumps(at3))
    ahead["move"]["ply"] = 39
    plant("a move of a ply not played yet", ahead, "stream event move")
    plant("an event placed at another id", {**at3, "id": start + 4}, "not the match at its id")
    planted["a comment"] = (SSE, f": keep-alive {bobs}", f"card {bobs}")
    planted["a heartbeat line"] = (NDJSON, f" {bobs} ", f"card {bobs}")
    assert_each_caught(
        {
            name: (lambda w=wire, b=block: caught_stream(s, w, b), reason)
            for name, (wire, block, reason) in planted.items()
        }
    )
    # The account stream: no card at all (even the seat's own), no seed (even one open).
    own = state.hands[0][0].code
    finished_seed = truth.deals[s.first].seed
    fine = {"id": 1, "type": "your_turn", "match": truth.match_id, "ply": 5, "your_turn": True}
    assert caught_stream(s, NDJSON, json.dumps(fine), account=True) is None
    assert caught_stream(s, SSE, _sse(fine), account=True) is None
    for block, reason in (
        (json.dumps({**fine, "hand": [own]}), f"card {own}"),
        (_sse(fine, event_line=f"your_turn {own}"), f"card {own}"),
        (json.dumps({**fine, "x": finished_seed}), "seed piece"),
        (json.dumps({**fine, "x": piece}), "seed piece"),
    ):
        wire = SSE if block.startswith("id:") else NDJSON
        complaint = caught_stream(s, wire, block, account=True)
        assert complaint is not None and reason in complaint, (block, complaint)
