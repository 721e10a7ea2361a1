"""The Django admin: a superuser can read matches, deals and moves, and change nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from django.test import Client

from games.models import Deal, Match, Move

if TYPE_CHECKING:
    from conftest import Player


@pytest.mark.django_db
def test_admin_pages_are_readable_and_nothing_is_editable(
    player: Callable[..., Player], play_out: Callable[..., object]
) -> None:
    alice = player("alice")
    match_id = alice.create()["id"]
    play_out(match_id, [alice], stop=lambda d: d["current_deal"]["ply"] >= 6)
    root = player("root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root.user)
    match = Match.objects.get(pk=match_id)
    deal = Deal.objects.get(match=match)
    move = Move.objects.filter(deal=deal).order_by("ply").first()
    assert move is not None
    for model, obj in (("match", match), ("deal", deal), ("move", move)):
        listing = client.get(f"/admin/games/{model}/")
        assert listing.status_code == 200, model
        change = client.get(f"/admin/games/{model}/{obj.pk}/change/")
        assert change.status_code == 200, model
        assert client.get(f"/admin/games/{model}/add/").status_code == 403, model
        assert client.get(f"/admin/games/{model}/{obj.pk}/delete/").status_code == 403, model
        # A POST to the change page changes nothing either.
        client.post(f"/admin/games/{model}/{obj.pk}/change/", {"status": "aborted"})
    assert str(match.pk) in client.get("/admin/games/match/").content.decode()
    # The inlines show the seats and deals on the match's page, and the moves on the deal's.
    page = client.get(f"/admin/games/match/{match.pk}/change/").content.decode()
    assert "alice" in page and "bot-greedy" in page and deal.commitment in page
    page = client.get(f"/admin/games/deal/{deal.pk}/change/").content.decode()
    assert move.card in page
    match.refresh_from_db()
    assert match.status == "active"
    assert Move.objects.filter(deal=deal).count() >= 6
    # An ordinary user is sent to the login page.
    plain = Client()
    plain.force_login(alice.user)
    assert plain.get("/admin/games/match/").status_code == 302


@pytest.mark.django_db
def test_admin_match_list_names_players_and_winner_and_a_deal_shows_its_tricks(
    player: Callable[..., Player], play_out: Callable[..., object]
) -> None:
    alice = player("alice")
    match_id = alice.create()["id"]
    play_out(match_id, [alice])
    match = Match.objects.get(pk=match_id)
    assert match.status == "finished"
    root = player("root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root.user)
    listing = client.get("/admin/games/match/").content.decode()
    assert "alice vs bot-greedy" in listing
    winner = {0: "alice", 1: "bot-greedy", None: "drawn"}[match.winner_team]
    assert f'<td class="field-winner">{winner}</td>' in listing
    assert f'<td class="field-score">{match.deals_won_team0}-{match.deals_won_team1}</td>' in (
        listing
    )
    deal = Deal.objects.get(match=match)
    page = client.get(f"/admin/games/deal/{deal.pk}/change/").content.decode()
    # 20 tricks, each with its leader, its two cards by seat, its winner and its points.
    assert page.count("<tr><td>") == 20
    first = Move.objects.filter(deal=deal).order_by("ply")[:2]
    leader = first[0].seat
    assert f"<td>S{leader} " in page
    assert f"{first[0].card} (S{first[0].seat}) {first[1].card} (S{first[1].seat})" in page
