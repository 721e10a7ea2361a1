"""Time limits, invitations, rematches and abandoned matches through the API (issue 14),
and the cap on active matches (issue 19.3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import RatingChange
from games.clocks import services as clocks
from games.models import Match, MatchEvent, Move, Seat
from tests.clocks.conftest import Player

pytestmark = pytest.mark.django_db

URL = "/api/v1/matches"
LIVE = {"per_move_seconds": 60}


def sweep(player: Player) -> int:
    """Run the deadline sweep, with what it queues on commit (bot replies, ratings)."""
    with player._capture(execute=True):
        return clocks.deadlines_sweep()


def to_move(player: Player, match_id: str) -> dict[str, Any]:
    detail = player.detail(match_id)
    assert detail["status"] == "active", detail["status"]
    assert detail["to_move"] == detail["your_seat"], "the person is to move"
    return detail


def kinds(player: Player, match_id: str) -> list[str]:
    return [e["type"] for e in player.events(match_id)["events"]]


@pytest.mark.parametrize(
    "extra",
    [
        {"time_control": {"per_move_seconds": 4}},
        {"time_control": {"per_move_seconds": 601}},
        {"time_control": {"per_move_hours": 0}},
        {"time_control": {"per_move_hours": 169}},
        {"time_control": {"minutes": 3}},
        {"time_control": {"per_move_seconds": "10"}},
        {"time_control": {"per_move_seconds": True}},
        {"time_control": {"per_move_seconds": 10, "per_move_hours": 1}},
        {"time_control": [10]},
        {"time_control": LIVE, "on_timeout": "never"},
        {"time_control": LIVE, "on_timeout": 1},
        {"time_control": LIVE, "timeout_bot": "grandmaster"},
    ],
)
def test_a_time_control_out_of_range_is_refused(player: Callable[..., Player], extra: Any) -> None:
    alice = player()
    body = {"players": 2, "seats": [{"bot": "greedy"}], **extra}
    alice.error("POST", URL, body, 400, "invalid_time_control")
    assert not Match.objects.exists()


def test_every_view_shows_the_deadline_and_seconds_left(
    player: Callable[..., Player], travel: Any
) -> None:
    alice = player()
    match_id = alice.create(time_control=LIVE)["id"]
    detail = to_move(alice, match_id)
    assert detail["time_control"] == LIVE and detail["on_timeout"] == "forfeit"
    assert detail["deadline"] is not None
    # The first card: max(60 s, 30 s), from the database's clock (the web server's may
    # differ from it by a second).
    assert 58 <= detail["seconds_left"] <= 61
    travel(match_id, 20)
    later = alice.detail(match_id)
    assert later["seconds_left"] == detail["seconds_left"] - 20
    listed = next(m for m in alice.get(URL)["results"] if m["id"] == match_id)
    assert listed["deadline"] == later["deadline"]
    assert listed["seconds_left"] == later["seconds_left"]
    hours = alice.create(time_control={"per_move_hours": 2})["id"]
    assert alice.detail(hours)["time_control"] == {"per_move_hours": 2}


def _allowance_given(match_id: str) -> float:
    """Seconds from the card that started the turn to the deadline it set: the card's time
    by the web server's clock, the deadline by the database's. (On PostgreSQL that was the
    transaction's start, which in a test is the test's own: 1.5 s and 6 s off in CI mimics
    under load; it is now the statement's, as the move holds the lock.)"""
    match = Match.objects.get(pk=match_id)
    last = Move.objects.filter(deal__match=match).order_by("-created_at").first()
    assert match.deadline is not None and last is not None
    return (match.deadline - last.created_at).total_seconds()


def test_a_turn_that_begins_while_a_trick_taken_is_shown_gets_that_time_more(
    player: Callable[..., Player], settings: Any
) -> None:
    """The table shows a trick just taken for PLAY_TRICK_HOLD_SECONDS with the hand
    waiting: a turn that begins then (the bots played since the trick, or nobody) gets
    that time more; with 5 s a move the browser audit had about 3.5 s to play after a
    bot took a trick and led. A turn after a person's card does not (the trick was shown
    before that card)."""
    settings.PLAY_TRICK_HOLD_SECONDS = 100.0  # far above the clocks' skew (below)
    alice, bob = player("alice"), player("bob")
    against_bot = alice.create(time_control={"per_move_seconds": 10})["id"]
    for _ in range(6):
        alice.play_first_legal(against_bot)
        to_move(alice, against_bot)
        assert abs(_allowance_given(against_bot) - 110) < 5
    people = alice.create(seats=[{"user": "bob"}], time_control={"per_move_seconds": 10})["id"]
    bob.join(people)
    _everyone_plays_once(people, alice, bob)  # past the first trick
    seen = set()
    for _ in range(8):
        detail = alice.detail(people)
        mover = alice if detail["to_move"] == detail["your_seat"] else bob
        table = mover.detail(people)["current_deal"]["table"]
        after_a_trick = not table  # the mover leads: the trick before was just taken
        seen.add(after_a_trick)
        assert abs(_allowance_given(people) - (110 if after_a_trick else 10)) < 5, table
        mover.play_first_legal(people)
    assert seen == {True, False}


def test_an_untimed_match_shows_its_idle_limit(
    player: Callable[..., Player], settings: Any
) -> None:
    alice = player()
    match_id = alice.create()["id"]
    detail = to_move(alice, match_id)
    assert detail["time_control"] is None
    hours = settings.MATCH_IDLE_HOURS
    assert hours * 3600 - 5 <= detail["seconds_left"] <= hours * 3600


def test_a_first_card_never_played_aborts_the_match(
    player: Callable[..., Player], travel: Any
) -> None:
    alice = player()
    match_id = alice.create(time_control={"per_move_seconds": 10}, rated=True)["id"]
    to_move(alice, match_id)
    travel(match_id, 20)  # the abort window is at least 30 s (10 s of margin for a slow run)
    assert sweep(alice) == 0
    travel(match_id, 11)
    assert sweep(alice) == 1
    detail = alice.detail(match_id)
    assert detail["status"] == "aborted" and detail["end_reason"] == "abort_window"
    assert detail["winner"] is None and detail["deadline"] is None
    assert not RatingChange.objects.filter(match_id=match_id).exists()
    assert "seat_timed_out" in kinds(alice, match_id)


def test_forfeit_on_timeout_ends_a_rated_match_and_rates_it_once(
    player: Callable[..., Player], travel: Any
) -> None:
    alice = player()
    match_id = alice.create(time_control={"per_move_seconds": 10}, rated=True)["id"]
    alice.play_first_legal(match_id)
    to_move(alice, match_id)
    travel(match_id, 11)
    assert sweep(alice) == 1
    assert sweep(alice) == 0  # exactly once
    detail = alice.detail(match_id)
    assert detail["status"] == "finished" and detail["end_reason"] == "timeout"
    assert detail["winner"] == 1 - detail["your_seat"] % 2
    assert RatingChange.objects.filter(match_id=match_id).count() == 2
    events = alice.events(match_id)["events"]
    timed_out = next(e for e in events if e["type"] == "seat_timed_out")
    assert timed_out["seat"] == detail["your_seat"] and timed_out["action"] == "forfeit"
    assert [e["type"] for e in events][-1] == "match_ended"


def test_a_card_after_the_deadline_is_refused_and_the_timeout_applied(
    player: Callable[..., Player], travel: Any
) -> None:
    alice = player()
    match_id = alice.create(time_control={"per_move_seconds": 10})["id"]
    alice.play_first_legal(match_id)
    deal = to_move(alice, match_id)["current_deal"]
    travel(match_id, 10.5)
    body = alice.error(
        "POST",
        f"{URL}/{match_id}/moves",
        {"card": deal["legal"][0], "ply": deal["ply"]},
        409,
        "deadline_passed",
    )
    assert body["details"]["deadline"]
    assert not Move.objects.filter(deal_id=deal["id"], ply=deal["ply"]).exists()
    assert alice.detail(match_id)["end_reason"] == "timeout"  # applied at once


def _until_to_move(match_id: str, person: Player, *others: Player) -> dict[str, Any]:
    """The others play (each their first legal card) until ``person`` is to move."""
    for _ in range(12):
        detail = person.detail(match_id)
        if detail["to_move"] == detail["your_seat"]:
            return to_move(person, match_id)
        for other in others:
            deal = other.detail(match_id)["current_deal"]
            if deal["turn"] == deal["seat"]:
                other.play_first_legal(match_id)
    raise AssertionError("never the person's turn")


def test_three_timeouts_hand_the_seat_to_the_bot_and_return_takes_it_back(
    player: Callable[..., Player], travel: Any
) -> None:
    """With another person at the table, who would wait out each of her turns."""
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(
        format="first_to_3",
        seats=[{"user": "bob"}],
        time_control={"per_move_seconds": 10},
        on_timeout="bot",
    )["id"]
    bob.join(match_id)
    _everyone_plays_once(match_id, alice, bob)
    seat = _until_to_move(match_id, alice, bob)["your_seat"]
    alice.error("POST", f"{URL}/{match_id}/return", None, 409, "seat_not_left")
    for timeout in (1, 2):
        ply = alice.detail(match_id)["current_deal"]["ply"]
        travel(match_id, 11)
        assert sweep(alice) == 1
        detail = _until_to_move(match_id, alice, bob)  # the bot played for her; her turn
        assert detail["current_deal"]["ply"] > ply
        assert detail["seats"][seat]["away"] and not detail["seats"][seat]["bot_holds"]
        assert Seat.objects.get(match_id=match_id, number=seat).timeouts_in_row == timeout
    travel(match_id, 11)
    clocks.deadlines_sweep()  # the third: the bot's reply is queued but not run here
    detail = alice.detail(match_id)
    assert detail["seats"][seat]["bot_holds"] and detail["deadline"] is None
    deal = detail["current_deal"]
    alice.error(
        "POST",
        f"{URL}/{match_id}/moves",
        {"card": deal["legal"][0], "ply": deal["ply"]},
        409,
        "seat_held_by_bot",
    )
    back = alice.post(f"{URL}/{match_id}/return")
    assert not back["seats"][seat]["bot_holds"] and not back["seats"][seat]["away"]
    assert back["deadline"] is not None and back["to_move"] == seat
    alice.play_first_legal(match_id)
    alice.error("POST", f"{URL}/{match_id}/return", None, 409, "seat_not_left")
    events = kinds(alice, match_id)
    assert events.count("seat_timed_out") == 3
    assert events.count("seat_taken_by_bot") == 1 and events.count("seat_returned") == 1
    # Each event sits just before the card played at its ply.
    listed = alice.events(match_id)["events"]
    for i, event in enumerate(listed):
        if event["type"] == "seat_timed_out":
            card = next(e for e in listed[i:] if e["type"] == "card_played")
            assert card["ply"] == event["ply"] and card["seat"] == seat


def test_against_bots_alone_the_bot_plays_each_turn_only_when_its_time_runs_out(
    player: Callable[..., Player], travel: Any
) -> None:
    """Nobody waits out her turns against the service's bots: past three timeouts the bot
    does not take the seat (it played the rest of the match in a blink, and she came back
    to a match over); it plays each of her turns when its time runs out, and she may take
    the seat back whenever she comes."""
    alice = player()
    match_id = alice.create(
        format="first_to_3", time_control={"per_move_seconds": 10}, on_timeout="bot"
    )["id"]
    alice.play_first_legal(match_id)
    seat = to_move(alice, match_id)["your_seat"]
    for timeout in range(1, 6):
        ply = alice.detail(match_id)["current_deal"]["ply"]
        travel(match_id, 11)
        assert sweep(alice) == 1
        detail = to_move(alice, match_id)  # one card for her, the bots', her turn again
        assert detail["current_deal"]["ply"] in range(ply + 1, ply + 4)
        assert detail["seats"][seat]["away"] and not detail["seats"][seat]["bot_holds"]
        assert detail["deadline"] is not None
        assert Seat.objects.get(match_id=match_id, number=seat).timeouts_in_row == timeout
    assert "seat_taken_by_bot" not in kinds(alice, match_id)
    back = alice.post(f"{URL}/{match_id}/return")
    assert not back["seats"][seat]["away"] and back["to_move"] == seat
    alice.play_first_legal(match_id)
    assert Seat.objects.get(match_id=match_id, number=seat).timeouts_in_row == 0


def test_playing_again_after_a_timeout_clears_away(
    player: Callable[..., Player], travel: Any
) -> None:
    alice = player()
    match_id = alice.create(time_control={"per_move_seconds": 10}, on_timeout="bot")["id"]
    alice.play_first_legal(match_id)
    seat = to_move(alice, match_id)["your_seat"]
    travel(match_id, 11)
    assert sweep(alice) == 1
    assert alice.detail(match_id)["seats"][seat]["away"]
    alice.play_first_legal(match_id)
    assert not alice.detail(match_id)["seats"][seat]["away"]
    assert Seat.objects.get(match_id=match_id, number=seat).timeouts_in_row == 0


def _a_deadline_passed(player: Callable[..., Player], travel: Any, settings: Any) -> Any:
    """alice's match, 10 s a move, past her first card: its deadline passed, not applied
    yet, and the in-process sweep free to run on the next request (no wait between runs)."""
    alice = player()
    match_id = alice.create(time_control={"per_move_seconds": 10})["id"]
    alice.play_first_legal(match_id)
    to_move(alice, match_id)
    travel(match_id, 11)
    settings.CLOCK_IN_PROCESS_SWEEP_SECONDS = 0
    return alice, match_id


def test_the_sweep_applies_deadlines_in_process_on_a_request(
    player: Callable[..., Player], travel: Any, settings: Any
) -> None:
    """Without a broker (make run), a request runs the sweep on its way in."""
    alice, match_id = _a_deadline_passed(player, travel, settings)
    assert alice.detail(match_id)["end_reason"] == "timeout"


@pytest.mark.parametrize("page", ["/play/", "/play/{match}/", "/admin/"])
def test_the_pages_apply_a_passed_deadline_before_they_show_the_match(
    player: Callable[..., Player], travel: Any, settings: Any, page: str
) -> None:
    """Without a broker (make run), a page request runs the sweep too: an outside audit
    came back to the lobby after its deadline, and the page said "Your turn" (and the
    table "Time left 0:00") until the page's own API calls ran it."""
    from django.test import Client

    _, match_id = _a_deadline_passed(player, travel, settings)
    Client().get(page.format(match=match_id))
    assert Match.objects.get(pk=match_id).end_reason == "timeout"


def test_a_static_file_or_a_probe_runs_no_sweep(
    player: Callable[..., Player], travel: Any, settings: Any
) -> None:
    from django.test import Client

    _, match_id = _a_deadline_passed(player, travel, settings)
    for path in ("/static/games/play/table.js", "/healthz", "/readyz"):
        Client().get(path)
    assert Match.objects.get(pk=match_id).end_reason == ""  # not applied


def test_without_a_broker_a_lost_bot_reply_is_played_by_the_in_process_sweep(
    player: Callable[..., Player], travel: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """make run has no beat to sweep the bot replies that never came (the re-audit saw one
    lost to SQLite's lock, the match stuck on the bot): the in-process sweep the requests
    and streams run re-plays it once it has waited BOT_SWEEP_AFTER_SECONDS."""
    from games.matches import services as match_services

    alice = player()
    match_id = alice.create(seats=[{"bot": "greedy"}])["id"]
    monkeypatch.setattr(match_services, "_bot_reply_send", lambda *args: False)  # lost
    # alice plays until the bot is to play (her card may end a trick she takes and leads
    # the next one); its reply is lost.
    for _ in range(3):
        detail = alice.play_first_legal(match_id)
        if Match.objects.get(pk=match_id).bot_to_move_since is not None:
            break
    monkeypatch.undo()
    assert Match.objects.get(pk=match_id).bot_to_move_since is not None
    ply = detail["current_deal"]["ply"]
    settings.CLOCK_IN_PROCESS_SWEEP_SECONDS = 0
    assert alice.detail(match_id)["current_deal"]["ply"] == ply  # not yet: 10 s to wait
    travel(match_id, settings.BOT_SWEEP_AFTER_SECONDS + 1)
    assert alice.detail(match_id)["current_deal"]["ply"] > ply  # the bot played


def test_invitations_are_found_declined_and_expired(
    player: Callable[..., Player], travel: Any
) -> None:
    alice, bob, carol = player("alice"), player("bob"), player("carol")
    invite = alice.create(seats=[{"user": "bob"}])["id"]
    assert [m["id"] for m in bob.get("/api/v1/invitations")["results"]] == [invite]
    assert carol.get("/api/v1/invitations")["results"] == []
    assert invite in {m["id"] for m in bob.get(URL, {"open": "true"})["results"]}
    assert alice.detail(invite)["expires_at"] is not None
    carol.error("POST", f"{URL}/{invite}/decline", {}, 403, "not_invited")
    alice.error("POST", f"{URL}/{invite}/decline", {}, 403, "not_invited")
    bob.error("POST", f"{URL}/{invite}/decline", {"reason": "x" * 201}, 400, "invalid_input")
    declined = bob.post(f"{URL}/{invite}/decline", {"reason": "busy tonight"})
    assert declined["status"] == "aborted" and declined["end_reason"] == "declined"
    event = next(e for e in alice.events(invite)["events"] if e["type"] == "invitation_declined")
    assert event["user"] == "bob" and event["reason"] == "busy tonight"
    bob.error("POST", f"{URL}/{invite}/decline", {}, 409, "match_not_joinable")
    assert bob.get("/api/v1/invitations")["results"] == []

    waiting = alice.create(seats=[{"user": "carol"}])["id"]
    travel(waiting, 24 * 3600 - 60)
    assert sweep(alice) == 0
    travel(waiting, 61)
    assert sweep(alice) == 1
    detail = alice.detail(waiting)
    assert detail["status"] == "aborted" and detail["end_reason"] == "expired"
    assert "match_expired" in kinds(alice, waiting)
    carol.error("POST", f"{URL}/{waiting}/join", {}, 409, "match_not_joinable")


def test_leave_and_cancel_a_waiting_match(player: Callable[..., Player]) -> None:
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(players=4, seats=["open", "open", "open"])["id"]
    bob.join(match_id)
    left = bob.post(f"{URL}/{match_id}/leave")
    assert [s["user"] for s in left["seats"]].count(None) == 3
    assert "seat_left" in kinds(alice, match_id)
    bob.error("POST", f"{URL}/{match_id}/leave", None, 403, "not_a_player")
    alice.error("POST", f"{URL}/{match_id}/leave", None, 409, "cannot_leave")
    cancelled = alice.post(f"{URL}/{match_id}/abort")
    assert cancelled["status"] == "aborted"
    started = alice.create()["id"]
    alice.error("POST", f"{URL}/{started}/leave", None, 409, "cannot_leave")


def _everyone_plays_once(match_id: str, *people: Player) -> None:
    """Each person plays a card: a match resigned before that is aborted, unrated (issue
    19), and only a finished match can be rematched."""
    for _ in range(4):
        for person in people:
            deal = person.detail(match_id)["current_deal"]
            if deal["turn"] == deal["seat"]:
                person.play_first_legal(match_id)
        played = {
            m["seat"] for m in person.events(match_id)["events"] if m["type"] == "card_played"
        }
        if all(p.detail(match_id)["your_seat"] in played for p in people):
            return
    raise AssertionError("not every person played")


def test_rematch_accepted_refused_and_with_bots(player: Callable[..., Player]) -> None:
    alice, bob, carol = player("alice"), player("bob"), player("carol")
    first = alice.create(seats=[{"user": "bob"}], time_control=LIVE, on_timeout="bot")["id"]
    bob.join(first)
    alice.error("POST", f"{URL}/{first}/rematch", None, 409, "match_not_finished")
    _everyone_plays_once(first, alice, bob)
    alice.post(f"{URL}/{first}/resign")
    carol.error("POST", f"{URL}/{first}/rematch", None, 403, "not_a_player")
    proposed = alice.post(f"{URL}/{first}/rematch", status=201)
    assert proposed["status"] == "waiting" and proposed["rematch_of"] == first
    assert [(s["user"], s["joined"]) for s in proposed["seats"]] == [
        ("bob", False),
        ("alice", True),
    ]
    assert proposed["time_control"] == LIVE and proposed["on_timeout"] == "bot"
    assert "rematch_proposed" in kinds(bob, first)
    assert [m["id"] for m in bob.get("/api/v1/invitations")["results"]] == [proposed["id"]]
    # Called again, or accepted: the rematch already proposed, 200 (201 only for a creation).
    assert alice.post(f"{URL}/{first}/rematch", status=200)["id"] == proposed["id"]
    accepted = bob.post(f"{URL}/{first}/rematch", status=200)
    assert accepted["id"] == proposed["id"] and accepted["status"] == "active"
    assert bob.post(f"{URL}/{first}/rematch", status=200)["id"] == proposed["id"]
    assert Match.objects.filter(rematch_of=first).count() == 1

    _everyone_plays_once(proposed["id"], alice, bob)
    alice.post(f"{URL}/{proposed['id']}/resign")
    again = bob.post(f"{URL}/{proposed['id']}/rematch", status=201)
    refused = alice.post(f"{URL}/{again['id']}/decline", {"reason": "enough"})
    assert refused["status"] == "aborted" and refused["end_reason"] == "declined"

    versus_bot = alice.create()["id"]
    _everyone_plays_once(versus_bot, alice)
    alice.post(f"{URL}/{versus_bot}/resign")
    with_bot = alice.post(f"{URL}/{versus_bot}/rematch", status=201)
    assert with_bot["status"] == "active"  # bots accept at once


def test_a_match_called_off_has_no_rematch(player: Callable[..., Player]) -> None:
    """A table cancelled while it waited for players never started, and a match resigned
    before every person played is aborted, nothing played out: neither is rematched (409
    ``match_not_finished``, as an active match), and no match is created."""
    alice, bob = player("alice"), player("bob")
    cancelled = alice.create(seats=["open"])["id"]
    assert alice.post(f"{URL}/{cancelled}/abort")["status"] == "aborted"
    invited = alice.create(seats=[{"user": "bob"}])["id"]
    assert bob.post(f"{URL}/{invited}/decline")["status"] == "aborted"
    early = alice.create()["id"]
    resigned = alice.post(f"{URL}/{early}/resign")
    assert (resigned["status"], resigned["end_reason"]) == ("aborted", "aborted")
    for match_id in (cancelled, invited, early):
        body = alice.error("POST", f"{URL}/{match_id}/rematch", None, 409, "match_not_finished")
        assert body["message"] == "A rematch can be proposed only once the match has finished."
    assert Match.objects.filter(rematch_of__isnull=False).count() == 0
    assert "rematch_proposed" not in kinds(alice, cancelled)


def test_returning_to_a_match_that_is_over_is_match_over(
    player: Callable[..., Player], travel: Any
) -> None:
    """Taking a seat back once the match is over answers 409 ``match_over``, as a move or a
    resignation does then (it answered ``seat_not_left``, as for a seat never left), and
    changes nothing: for a seat the bot held when the match ended, a seat never left, and
    a match called off."""
    alice, bob = player("alice"), player("bob")
    match_id = alice.create(
        seats=[{"user": "bob"}], time_control={"per_move_seconds": 10}, on_timeout="bot"
    )["id"]
    bob.join(match_id)
    _everyone_plays_once(match_id, alice, bob)
    seat = alice.detail(match_id)["your_seat"]
    for _ in range(30):  # bob plays at once; alice times out until the bot holds her seat
        detail = alice.detail(match_id)
        if detail["seats"][seat]["bot_holds"]:
            break
        if detail["to_move"] != seat:
            bob.play_first_legal(match_id)
        else:
            travel(match_id, 11)
            sweep(alice)
    assert alice.detail(match_id)["seats"][seat]["bot_holds"]
    bob.post(f"{URL}/{match_id}/resign")
    over = alice.detail(match_id)
    assert over["status"] == "finished" and over["seats"][seat]["bot_holds"]
    body = alice.error("POST", f"{URL}/{match_id}/return", None, 409, "match_over")
    assert body["message"] == "The match is over."
    bob.error("POST", f"{URL}/{match_id}/return", None, 409, "match_over")
    assert alice.detail(match_id)["seats"][seat]["bot_holds"]
    assert "seat_returned" not in kinds(alice, match_id)

    early = alice.create()["id"]
    assert alice.post(f"{URL}/{early}/resign")["status"] == "aborted"
    alice.error("POST", f"{URL}/{early}/return", None, 409, "match_over")
    # Still playing, the codes are as they were: a seat never left, and a stranger.
    playing = alice.create()["id"]
    alice.error("POST", f"{URL}/{playing}/return", None, 409, "seat_not_left")
    bob.error("POST", f"{URL}/{playing}/return", None, 403, "not_a_player")


def test_too_many_active_matches_is_429(player: Callable[..., Player], settings: Any) -> None:
    settings.MATCH_ACTIVE_LIMIT = 2
    alice, bob = player("alice"), player("bob")
    first = alice.create()["id"]
    waiting = alice.create(seats=["open"])["id"]
    body = alice.error(
        "POST", URL, {"players": 2, "seats": [{"bot": "greedy"}]}, 429, "too_many_active_matches"
    )
    assert body["details"] == {"limit": 2, "active": 2}
    bob.create()
    bob.create()
    bob.error("POST", f"{URL}/{waiting}/join", {}, 429, "too_many_active_matches")
    alice.post(f"{URL}/{first}/resign")
    alice.create()
    assert MatchEvent.objects.count() == 0
