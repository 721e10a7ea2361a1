"""Who may replay, export and verify what (docs/rules.md, "What each seat may know").

Table-driven over the roles (anonymous, stranger, the player in seat 0, the opponent in
seat 1, an administrator), during a deal and after it, private and public matches, and
every replay parameter that could show a hand. Every response anyone but an administrator
gets (errors included), during the deal and after it, goes through the one secrecy
detector, :mod:`leak_audit`: every JSON key and string value and every header is searched
for the cards the viewer may not know now and for pieces of the live seed, in any letter
case, and a finished deal's content is checked against its truth. On top of that a seat's
replay names no card outside what that seat had seen by the ply asked (whole codes wherever
they stand, in keys and messages too), and an outsider's refusal names no card at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from leak_audit import CARD_TOKEN, Audit, Viewer, json_strings

from games import rules
from games.matches.selectors import deal_state

PLY = 7  # moves played when "during" is checked

ROLES = ["anonymous", "stranger", "seat0", "seat1", "admin"]
# Each parameter set, and what it asks for (relative to the present ply PLY).
PARAMS: list[dict[str, Any]] = [
    {},
    {"seat": 0},
    {"seat": 1},
    {"ply": 0},
    {"ply": 3},
    {"ply": PLY},
    {"ply": PLY + 1},
    {"ply": 40},
    {"seat": 0, "ply": 3},
    {"seat": 0, "ply": PLY},
    {"seat": 0, "ply": PLY + 1},
    {"seat": 0, "ply": 40},
    {"seat": 1, "ply": 3},
    {"seat": 1, "ply": PLY},
    {"seat": 1, "ply": PLY + 1},
]
BAD_PARAMS: list[dict[str, Any]] = [
    {"ply": -1},
    {"ply": 41},
    {"ply": "x"},
    {"ply": "3.5"},
    {"seat": -1},
    {"seat": 4},
    {"seat": "north"},
    {"seat": ""},
    {"turn": 1},
]


def expected_during(role: str, params: dict[str, Any], public: bool) -> tuple[int, str | None]:
    if role == "anonymous":
        return (403, "deal_not_over") if public else (401, "not_authenticated")
    if role == "stranger":
        # A private match's deal answers a stranger as a deal that does not exist.
        return (403, "deal_not_over") if public else (404, "deal_not_found")
    ply = params.get("ply")
    if role == "admin":
        return (400, "invalid_input") if ply is not None and ply > PLY else (200, None)
    own = int(role[-1])
    if params.get("seat") != own:
        return 403, "replay_seat_forbidden"
    if ply is not None and ply > PLY:
        return 403, "replay_beyond_present"
    return 200, None


def expected_after(role: str, public: bool) -> tuple[int, str | None]:
    if role == "anonymous" and not public:
        return 401, "not_authenticated"
    if role == "stranger" and not public:
        return 404, "deal_not_found"
    return 200, None


def known_to(state: rules.Deal, seat: int) -> set[str]:
    """Every card ``seat`` has seen by now: its hands, every card played, the briscola."""
    n = state.players
    first = (state.dealer + 1) % n
    seen = {state.deck[i].code for i in range(3 * n) if (first + i) % n == seat}
    seen |= {d.card.code for d in state.draws if d.seat == seat}
    seen |= {c.code for c in state.moves}
    seen.add(state.briscola.code)
    return seen


def cards_in(body: Any) -> set[str]:
    """Every card code in a JSON body: whole codes in any key or string value."""
    return {c for text in json_strings(body) for c in CARD_TOKEN.findall(text)}


@pytest.fixture
def audit(django_capture_on_commit_callbacks: Any) -> Audit:
    return Audit(django_capture_on_commit_callbacks)


def viewers(t: Any) -> dict[str, Viewer]:
    """Who the detector checks: everyone but the administrator (who may see all)."""
    return {
        "anonymous": Viewer("anonymous", t.clients["anonymous"]),
        "stranger": Viewer("stranger", t.clients["stranger"], t.stranger),
        **{
            f"seat{s}": Viewer(f"seat{s}", t.clients[f"seat{s}"], u, s) for s, u in t.seated.items()
        },
    }


def check_response(response: Any, status: int, code: str | None) -> dict[str, Any]:
    body = response.json()
    assert response.status_code == status, (response.status_code, body)
    if code is not None:
        assert set(body) == {"code", "message", "details"} and body["code"] == code, body
    return body


@pytest.mark.django_db
@pytest.mark.parametrize("public", [False, True], ids=["private", "public"])
def test_replay_permissions_during_and_after_the_deal(
    table: Callable[..., Any], games: Any, audit: Audit, public: bool
) -> None:
    t = table(public=public)
    url = f"/api/v1/deals/{t.deal.pk}/replay"
    games.play(t.match, PLY)
    state = deal_state(t.deal)
    seed = t.deal.seed
    truth, who = audit.follow(str(t.match.pk)), viewers(t)
    assert truth.active is not None and truth.active.seed == seed

    for role in ROLES:
        client = t.clients[role]
        for params in PARAMS:
            status, code = expected_during(role, params, public)
            response = client.get(url, params)
            body = check_response(response, status, code)
            if role != "admin":
                audit.check(who[role], response, f"replay {params}")
            if role in ("seat0", "seat1"):
                seat = int(role[-1])
                leaked = cards_in(body) - known_to(state, seat)
                assert not leaked, (role, params, leaked)
                assert not {"deck", "hands", "stock", "initial_hands"} & set(
                    body.get("position", {})
                )
                if status == 200:
                    ply = params.get("ply", PLY)
                    prefix = rules.replay_moves(2, t.deal.dealer, state.deck, state.moves[:ply])
                    assert body["position"] == rules.seat_view(prefix, seat).to_dict()
                    assert body["ply"] == ply and body["plies"] == PLY
            if role in ("anonymous", "stranger"):
                assert not cards_in(body), (role, params)
        for params in BAD_PARAMS:
            response = client.get(url, params)
            check_response(response, 400, "invalid_input")
            if role != "admin":
                audit.check(who[role], response, f"replay {params}")

    # The other endpoints keep the deal's secrets too.
    for role in ROLES:
        client = t.clients[role]
        for endpoint in ("verify", "export", "export?format=text", "export.txt"):
            response = client.get(f"/api/v1/deals/{t.deal.pk}/{endpoint}")
            if role == "admin":
                assert response.status_code == 200, (endpoint, response.content)
                continue
            audit.check(who[role], response, endpoint)
            if role == "anonymous" and not public:
                check_response(response, 401, "not_authenticated")
            elif role == "stranger" and not public:
                check_response(response, 404, "deal_not_found")
            else:
                check_response(response, 403, "deal_not_over")
        exported = client.get(f"/api/v1/matches/{t.match.pk}/export")
        if role != "admin":
            audit.check(who[role], exported, "match export")
        if role == "anonymous" and not public:
            check_response(exported, 401, "not_authenticated")
        elif role == "stranger" and not public:
            check_response(exported, 403, "match_private")
        else:
            assert check_response(exported, 200, None)["deals"] == []  # none is over yet

    games.play(t.match, 40 - PLY)
    t.refresh()
    assert t.deal.status == "finished"
    full = deal_state(t.deal)
    truth.refresh()
    assert truth.active is None and set(truth.finished) == {t.deal.pk}
    who["admin"] = Viewer("admin", t.clients["admin"], t.admin)
    for role in ROLES:
        status, code = expected_after(role, public)
        client = t.clients[role]
        for params in PARAMS:
            if params.get("ply", 0) > 40:
                continue
            response = client.get(url, params)
            body = check_response(response, status, code)
            audit.check(who[role], response, f"replay {params}")  # the finished deal's truth
            if status == 200:
                ply = params.get("ply", 40)
                prefix = rules.replay_moves(2, t.deal.dealer, full.deck, full.moves[:ply])
                seat = params.get("seat")
                expected = (
                    rules.full_view(prefix, before_end=True)
                    if seat is None
                    else rules.seat_view(prefix, seat)
                ).to_dict()
                assert body["position"] == expected
            else:
                assert not cards_in(body) and seed not in str(body), (role, body)
        for endpoint in ("verify", "export", "export?format=text", "export.txt"):
            response = client.get(f"/api/v1/deals/{t.deal.pk}/{endpoint}")
            assert response.status_code == status, (role, endpoint)
            audit.check(who[role], response, endpoint)
            if status == 200:
                assert seed in response.content.decode()
        for params in BAD_PARAMS:
            check_response(client.get(url, params), 400, "invalid_input")


@pytest.mark.django_db
def test_a_seat_beyond_the_table_is_invalid_input_after_the_access_check(
    table: Callable[..., Any], games: Any
) -> None:
    t = table()
    games.play(t.match, 3)
    url = f"/api/v1/deals/{t.deal.pk}/replay"
    check_response(t.clients["seat0"].get(url, {"seat": 2}), 400, "invalid_input")
    check_response(t.clients["admin"].get(url, {"seat": 3}), 400, "invalid_input")
    check_response(t.clients["stranger"].get(url, {"seat": 2}), 404, "deal_not_found")
    check_response(t.clients["seat0"].get("/api/v1/deals/999999/replay"), 404, "deal_not_found")


@pytest.mark.django_db
def test_four_players_seat_views_and_partner_hands(
    table: Callable[..., Any], games: Any, audit: Audit
) -> None:
    """In a 4-player deal a player sees their own hand, and the partner's only in the last
    three tricks (the match option); never an opponent's, at any ply."""
    t = table(players=4)
    games.play(t.match, 31)  # the stock is empty after trick 7 (28 moves)
    state = deal_state(t.deal)
    url = f"/api/v1/deals/{t.deal.pk}/replay"
    audit.follow(str(t.match.pk))
    who = viewers(t)
    for seat in range(4):
        client = t.clients[f"seat{seat}"]
        for ply in range(0, 32, 3):
            response = client.get(url, {"seat": seat, "ply": ply})
            body = check_response(response, 200, None)
            audit.check(who[f"seat{seat}"], response, f"replay at {ply}")
            prefix = rules.replay_moves(4, t.deal.dealer, state.deck, state.moves[:ply])
            assert body["position"] == rules.seat_view(prefix, seat).to_dict()
            seen = known_to(prefix, seat)
            if body["position"]["partner_hand"] is not None:
                seen |= set(body["position"]["partner_hand"])
            leaked = cards_in(body) - seen
            assert not leaked, (seat, ply, leaked)
        for other in range(4):
            if other != seat:
                check_response(client.get(url, {"seat": other}), 403, "replay_seat_forbidden")
