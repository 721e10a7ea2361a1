"""The replay API against games.rules: steps and positions at every ply, the export in
both formats, re-importing an export, verification, and checking records."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.test import Client

from games import rules
from games.matches.selectors import deal_state
from games.matches.services import match_resign
from games.models import Deal
from games.replays.selectors import replay_steps

TRICK_LINE = re.compile(r"^(\d+)\. ((?:[A3RCF76542][cdsb] ?)+)  winner S([0-3]) \+(\d+)$")


def finished(table: Callable[..., Any], games: Any, **options: Any) -> Any:
    t = table(**options)
    games.play(t.match, 40)
    t.refresh()
    assert t.deal.status == "finished"
    return t


@pytest.mark.django_db
@pytest.mark.parametrize("players", [2, 4])
def test_every_ply_and_view_is_what_the_rules_give(
    table: Callable[..., Any], games: Any, players: int
) -> None:
    t = finished(table, games, players=players)
    state = deal_state(t.deal)
    url = f"/api/v1/deals/{t.deal.pk}/replay"
    client = t.clients["seat0"]

    whole = client.get(url).json()
    assert whole["ply"] == whole["plies"] == 40 and whole["seat"] is None
    steps = whole["steps"]
    kinds = [s["type"] for s in steps]
    tricks = 40 // players
    assert kinds.count("deal_started") == 1 and kinds.count("hand_dealt") == players
    assert kinds.count("card_played") == 40 and kinds.count("trick_won") == tricks
    assert kinds.count("card_drawn") == 40 - 3 * players and kinds[-1] == "deal_ended"
    assert [s["step"] for s in steps] == list(range(len(steps)))
    assert [s["at_ply"] for s in steps] == sorted(s["at_ply"] for s in steps)
    assert steps[-1]["points"] == list(state.points) == [t.deal.points_team0, t.deal.points_team1]
    assert whole["position"] == rules.full_view(state).to_dict()

    for ply in range(41):
        prefix = rules.replay_moves(players, t.deal.dealer, state.deck, state.moves[:ply])
        body = client.get(url, {"ply": ply}).json()
        assert body["ply"] == ply
        assert body["position"] == rules.full_view(prefix, before_end=True).to_dict()
        events = rules.deal_events(prefix, None, before_end=True)
        assert body["steps"] == replay_steps(events)
        assert body["steps"] == [
            s for s in steps if s["at_ply"] <= ply and s["type"] != "deal_ended"
        ] + ([steps[-1]] if ply == 40 else [])
        seat = ply % players
        seen = client.get(url, {"ply": ply, "seat": seat}).json()
        assert seen["position"] == rules.seat_view(prefix, seat).to_dict()
        assert seen["steps"] == replay_steps(rules.deal_events(prefix, seat))


@pytest.mark.django_db
def test_export_text_and_json_and_reimport(table: Callable[..., Any], games: Any) -> None:
    t = finished(table, games)
    client = t.clients["seat1"]
    deal = t.deal
    state = deal_state(deal)

    record = client.get(f"/api/v1/deals/{deal.pk}/export").json()
    assert record == client.get(f"/api/v1/deals/{deal.pk}/export", {"format": "json"}).json()
    assert record["format"] == "briscola-deal/1" and record["seed"] == deal.seed
    assert record["commitment"] == deal.commitment
    assert record["result"] == {
        "points": [deal.points_team0, deal.points_team1],
        "winner": deal.winner_team,
    }
    assert record["moves"] == [c.code for c in state.moves]

    response = client.get(f"/api/v1/deals/{deal.pk}/export", {"format": "text"})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    header, _, body = text.partition("\n\n")
    names = [t.seated[0].username, t.seated[1].username]
    assert f"Players: S0 {names[0]}, S1 {names[1]}" in header
    assert f"Dealer: S{deal.dealer}" in header and f"Briscola: {state.briscola}" in header
    assert f"Seed: {deal.seed}" in header and f"Commitment: {deal.commitment}" in header
    assert (
        f"Result: {deal.points_team0}-{deal.points_team1}, winner team {deal.winner_team}" in header
    )
    lines = body.strip().split("\n")
    assert len(lines) == 20
    for number, (line, trick) in enumerate(zip(lines, state.tricks, strict=True), start=1):
        match = TRICK_LINE.match(line)
        assert match, line
        assert int(match[1]) == number and match[2] == " ".join(c.code for c in trick.cards)
        assert int(match[3]) == trick.winner and int(match[4]) == trick.points
    assert lines[6] == (
        f"7. {state.tricks[6].cards[0]} {state.tricks[6].cards[1]}  "
        f"winner S{state.tricks[6].winner} +{state.tricks[6].points}"
    )
    bad = client.get(f"/api/v1/deals/{deal.pk}/export", {"format": "pgn"})
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_input"

    # Re-importing the export replays to the same deal, and verifies.
    checked = client.post("/api/v1/records/check", record, format="json").json()
    replay = rules.Replay(state, complete=True).to_dict()
    assert {k: checked[k] for k in replay} == replay
    assert checked["points"] == record["result"]["points"] and checked["complete"] is True
    assert checked["verify"]["ok"] is True
    assert checked["steps"] == client.get(f"/api/v1/deals/{deal.pk}/replay").json()["steps"]
    # The body of GET /deals/{id} works as well: its "record" is used.
    pasted = client.get(f"/api/v1/deals/{deal.pk}").json()
    assert (
        client.post("/api/v1/records/check", pasted, format="json").json()["points"]
        == (checked["points"])
    )


@pytest.mark.django_db
def test_match_export_lists_the_deals_that_are_over(table: Callable[..., Any], games: Any) -> None:
    t = table(format="first_to_2")
    games.play(t.match, 40)
    games.play(t.match, 5)  # the second deal is being played
    client = t.clients["seat0"]
    exported = client.get(f"/api/v1/matches/{t.match.pk}/export").json()
    assert exported["match"] == str(t.match.pk)
    assert exported["seats"] == [t.seated[0].username, t.seated[1].username]
    assert [d["number"] for d in exported["deals"]] == [1]
    first = Deal.objects.get(match=t.match, number=1)
    assert exported["deals"][0]["record"] == (client.get(f"/api/v1/deals/{first.pk}/export").json())
    text = client.get(f"/api/v1/matches/{t.match.pk}/export", {"format": "text"})
    assert text.status_code == 200 and f"Seed: {first.seed}" in text.content.decode()
    second = Deal.objects.get(match=t.match, number=2)
    assert second.seed not in text.content.decode()


@pytest.mark.django_db
def test_the_text_exports_have_their_own_paths_and_format_text_still_works(
    table: Callable[..., Any], games: Any
) -> None:
    """`.../export.txt` answers the text notation (`text/plain`, the same file name) that
    `?format=text` answers at `.../export`, which older clients still use; errors stay
    JSON with their codes, whatever `Accept` says, and `export.txt` takes no `?format=`."""
    t = table(format="first_to_2")
    games.play(t.match, 40)
    games.play(t.match, 5)
    t.refresh()
    first = Deal.objects.get(match=t.match, number=1)
    client = t.clients["seat0"]
    for base, filename in (
        (f"/api/v1/deals/{first.pk}/export", f"deal-{first.pk}.txt"),
        (f"/api/v1/matches/{t.match.pk}/export", f"match-{t.match.pk}.txt"),
    ):
        text = client.get(base + ".txt")
        assert text.status_code == 200, text.content
        assert text["Content-Type"] == "text/plain; charset=utf-8"
        assert text["Content-Disposition"] == f'inline; filename="{filename}"'
        assert f"Seed: {first.seed}" in text.content.decode()
        kept = client.get(base, {"format": "text"})  # the old way, for existing clients
        assert kept.status_code == 200 and kept.content == text.content
        assert kept["Content-Type"] == text["Content-Type"]
        assert kept["Content-Disposition"] == text["Content-Disposition"]
        assert client.get(base)["Content-Type"] == "application/json"
        assert client.get(base + ".txt", HTTP_ACCEPT="text/plain").content == text.content
        for bad in ({"format": "json"}, {"format": "text"}, {"ply": "1"}):
            refused = client.get(base + ".txt", bad, HTTP_ACCEPT="text/plain")
            assert refused.status_code == 400 and refused["Content-Type"] == "application/json"
            assert refused.json()["code"] == "invalid_input"
            assert list(refused.json()["details"]) == list(bad)
    # The same access rules and error bodies as the JSON exports.
    second = Deal.objects.get(match=t.match, number=2)  # being played
    urls = [
        f"/api/v1/deals/{second.pk}/export",
        "/api/v1/deals/999999/export",
        "/api/v1/deals/abc/export",
        f"/api/v1/matches/{t.match.pk}/export",
        "/api/v1/matches/00000000-0000-0000-0000-000000000000/export",
    ]
    for who in ("seat1", "stranger", "anonymous"):
        for url in urls:
            as_json = t.clients[who].get(url)
            as_text = t.clients[who].get(url + ".txt", HTTP_ACCEPT="text/plain")
            assert as_text.status_code == as_json.status_code, (who, url)
            if as_json.status_code != 200:
                assert as_text["Content-Type"] == "application/json", (who, url)
                assert as_text.json() == as_json.json(), (who, url)
    assert t.clients["stranger"].get(f"/api/v1/deals/{first.pk}/export.txt").json()["code"] == (
        "deal_not_found"
    )
    assert t.clients["seat1"].get(f"/api/v1/deals/{second.pk}/export.txt").json()["code"] == (
        "deal_not_over"
    )


@pytest.mark.django_db
def test_verify_every_finished_deal_and_catch_tampering(
    table: Callable[..., Any], games: Any
) -> None:
    for players in (2, 4):
        t = table(players=players, format="first_to_2")
        while t.match.status == "active":
            state = games.state(t.match)
            games.play(t.match, 40 - state.ply)
            t.refresh()
    resigned = table(public=True)
    games.play(resigned.match, 9)
    match_resign(match_id=resigned.match.pk, user=resigned.seated[0])
    over = Deal.objects.exclude(status="active").select_related("match")
    assert over.count() >= 5 and over.filter(status="abandoned").count() == 1
    admin = resigned.clients["admin"]
    for deal in over:
        body = admin.get(f"/api/v1/deals/{deal.pk}/verify").json()
        assert body["ok"] is True, body
        assert [c["name"] for c in body["checks"]] == [
            "commitment",
            "deck",
            "moves",
            "result",
            "move_seats",
        ]
    # The abandoned deal replays up to where it stopped, for its players.
    abandoned = over.get(status="abandoned")
    body = resigned.clients["seat1"].get(f"/api/v1/deals/{abandoned.pk}/replay").json()
    assert body["plies"] == 9 and sorted(map(len, body["position"]["hands"])) == [2, 3]

    deal = over.filter(status="finished").first()
    assert deal is not None
    url = f"/api/v1/deals/{deal.pk}/verify"
    Deal.objects.filter(pk=deal.pk).update(points_team0=deal.points_team0 + 1)
    body = admin.get(url).json()
    assert body["ok"] is False
    assert [c["name"] for c in body["checks"] if not c["ok"]] == ["result"]
    Deal.objects.filter(pk=deal.pk).update(points_team0=deal.points_team0)
    # The commitment cannot be changed any more (games migration 0005's trigger): only
    # someone who can remove the trigger could, and verify would still catch it.
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic():
        Deal.objects.filter(pk=deal.pk).update(commitment="0" * 64)
    with transaction.atomic():
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending FK checks
                cursor.execute("ALTER TABLE games_deal DISABLE TRIGGER games_deal_immutable")
            else:
                cursor.execute("DROP TRIGGER games_deal_immutable")
        Deal.objects.filter(pk=deal.pk).update(commitment="0" * 64)
        body = admin.get(url).json()
        assert [c["name"] for c in body["checks"] if not c["ok"]] == ["commitment"]
        transaction.set_rollback(True)  # the trigger comes back with the rollback
    assert Deal.objects.get(pk=deal.pk).commitment == deal.commitment


@pytest.mark.django_db
def test_record_check_errors(table: Callable[..., Any], games: Any) -> None:
    t = finished(table, games)
    client = t.clients["stranger"]
    record = t.clients["seat0"].get(f"/api/v1/deals/{t.deal.pk}/export").json()

    def error(body: Any, where: str, status: int = 400, code: str = "invalid_record") -> Any:
        if isinstance(body, (bytes, str)):
            response = client.post("/api/v1/records/check", body, content_type="application/json")
        else:
            response = client.post("/api/v1/records/check", body, format="json")
        data = response.json()
        assert response.status_code == status, data
        assert data["code"] == code, data
        if where:
            assert data["details"]["where"] == where, data
            assert data["message"].startswith(where)
        return data

    moves = list(record["moves"])
    moves[12] = moves[0]
    error({**record, "moves": moves}, "moves[12]")
    error({**record, "moves": [*record["moves"][:5], "Zz"]}, "moves[5]")
    error({**record, "deck": record["deck"][:39]}, "deck")
    error({**record, "players": 3}, "players")
    error({**record, "commitment": "abc"}, "commitment")
    error({**record, "result": {"points": [1]}}, "result.points")
    error({**record, "extra": 1}, "extra")
    error(b'{"format": "briscola-deal/1",', "record")
    error(b"[1, 2]", "record")
    error(b"\xff\xfe", "record")
    huge = json.dumps({**record, "padding": "x" * 70_000})
    error(huge, "", status=413, code="record_too_large")
    anonymous = Client().post("/api/v1/records/check", record, content_type="application/json")
    assert anonymous.status_code == 401
    # A partial record (no seed) replays to the position it reaches.
    partial = {k: record[k] for k in ("format", "players", "dealer", "deck")}
    partial["moves"] = record["moves"][:11]
    body = client.post("/api/v1/records/check", partial, format="json").json()
    assert body["complete"] is False and body["moves"] == 11 and "verify" not in body
    # A tampered result is a verification failure, not an unreadable record.
    wrong = {**record, "result": {"points": [60, 60], "winner": None}}
    body = client.post("/api/v1/records/check", wrong, format="json").json()
    assert body["verify"]["ok"] is False
    # Without its seed and commitment, a record's result is still compared with the replay.
    unseeded = {k: v for k, v in wrong.items() if k not in ("seed", "commitment")}
    body = client.post("/api/v1/records/check", unseeded, format="json").json()
    assert body["points"] == record["result"]["points"]
    assert body["verify"]["ok"] is False
    assert [(c["name"], c["ok"]) for c in body["verify"]["checks"]] == [("result", False)]
    right = {k: v for k, v in record.items() if k not in ("seed", "commitment")}
    body = client.post("/api/v1/records/check", right, format="json").json()
    assert body["verify"] == {"ok": True, "checks": [{**body["verify"]["checks"][0], "ok": True}]}
    assert body["verify"]["checks"][0]["name"] == "result"


@pytest.mark.django_db
def test_replay_page_and_admin_link(table: Callable[..., Any], games: Any) -> None:
    private = table()
    games.play(private.match, 4)
    page = f"/replay/{private.deal.pk}/"
    client = Client()
    response = client.get(page)
    # To the play pages' sign-in (which links to sign-up), coming back here after.
    assert response.status_code == 302
    assert response["Location"] == f"/play/signin/?next=/replay/{private.deal.pk}/"
    client.force_login(private.seated[0])
    response = client.get(page)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-your-seat="0"' in html and 'data-can-see-all="0"' in html
    assert "Whole table" not in html and private.deal.seed not in html
    # While the deal is played its record is secret (the API answers 403): no links to it.
    assert f"/api/v1/deals/{private.deal.pk}/export" not in html
    assert f'href="/play/{private.match.pk}/"' in html  # the match's table, for its players
    # A deal that does not exist: the sign-in for an anonymous visitor (as a private
    # deal), the 404 page for a signed-in one (as a private deal to a stranger).
    absent = Client().get("/replay/999999/")
    assert absent.status_code == 302
    assert absent["Location"] == "/play/signin/?next=/replay/999999/"
    assert client.get("/replay/999999/").status_code == 404

    public = finished(table, games, public=True)
    response = Client().get(f"/replay/{public.deal.pk}/")
    assert response.status_code == 200 and "Whole table" in response.content.decode()
    assert f"/api/v1/deals/{public.deal.pk}/export.txt" in response.content.decode()
    # Anonymous visitors may replay a public match's finished deal through the API.
    assert Client().get(f"/api/v1/deals/{public.deal.pk}/replay").status_code == 200

    root = Client()
    root.force_login(private.admin)
    private.admin.is_superuser = True
    private.admin.save()
    change = root.get(f"/admin/games/deal/{private.deal.pk}/change/").content.decode()
    assert f'href="/replay/{private.deal.pk}/"' in change


def _page(user: Any, deal: Deal) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/replay/{deal.pk}/")
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.django_db
def test_a_live_deals_replay_opens_with_the_hands_hidden_for_an_administrator(
    table: Callable[..., Any], games: Any
) -> None:
    """An administrator who holds no seat may see a live deal whole (the API's
    staff_powers), but the page opens with the hands hidden and the record's links hidden
    behind a warning, as the admin's deal page hides the live seed."""
    t = table()
    games.play(t.match, 4)
    html = _page(t.admin, t.deal)
    assert 'data-guarded="1"' in html and 'data-can-see-all="1"' in html
    assert '<select id="seat-select" disabled>' in html
    assert '<option value="hidden" selected>Hands hidden</option>' in html
    assert '<span id="records" class="links" hidden>' in html
    assert 'id="show-anyway"' in html and "Do not share them" in html
    # A finished deal is not guarded: the whole table, the record at once.
    done = finished(table, games, public=True)
    html = _page(done.admin, done.deal)
    assert 'data-guarded="0"' in html and 'value="hidden"' not in html
    assert 'id="show-anyway"' not in html and '<span id="records" class="links">' in html


@pytest.mark.django_db
def test_an_administrator_who_plays_is_offered_only_what_the_api_allows_a_player(
    table: Callable[..., Any], games: Any
) -> None:
    """staff_powers, the API's rule: a staff member seated in the match is a player like
    the others, offered their own seat only, and no record before the deal is over."""
    t = table()
    games.play(t.match, 4)
    player = t.seated[1]
    player.is_staff = player.is_superuser = True
    player.save()
    html = _page(player, t.deal)
    assert 'data-your-seat="1"' in html and 'data-can-see-all="0"' in html
    assert 'data-guarded="0"' in html
    assert "Whole table" not in html
    assert '<option value="0"' not in html and '<option value="1"' in html
    assert f"/api/v1/deals/{t.deal.pk}/export" not in html and 'id="verify"' not in html
    # What the page offers the API gives; what it does not offer the API refuses.
    api = t.clients["seat1"]
    api.force_authenticate(player)
    url = f"/api/v1/deals/{t.deal.pk}/replay"
    assert api.get(url, {"seat": 1}).status_code == 200
    assert api.get(url).json()["code"] == "replay_seat_forbidden"


@pytest.mark.django_db
def test_the_replay_page_says_the_apis_refusals_and_the_verification_in_its_language(
    table: Callable[..., Any], games: Any
) -> None:
    t = table()
    games.play(t.match, 4)
    client = Client()
    client.force_login(t.seated[0])
    page = client.get(f"/replay/{t.deal.pk}/", HTTP_ACCEPT_LANGUAGE="it").content.decode()
    found = re.search(r'<script id="replay-strings" type="application/json">(.*?)</script>', page)
    assert found
    words = json.loads(found.group(1))
    for code in ("replay_seat_forbidden", "replay_beyond_present", "deal_not_over"):
        assert words["errors"][code] and "seat=" not in words["errors"][code]
        assert words["errors"][code] != rules_english(code), code
    assert set(words["verify"]["checks"]) == {"commitment", "deck", "moves", "result", "move_seats"}
    assert words["verify"]["ok"] == "Verificata: tutto torna."


def rules_english(code: str) -> str:
    from django.utils import translation

    from games.replays.pages import page_strings

    with translation.override("en"):
        errors = page_strings()["errors"]
    assert isinstance(errors, dict)
    return str(errors[code])
