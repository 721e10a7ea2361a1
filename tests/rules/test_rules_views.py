"""What each viewer may know (docs/rules.md, "What each seat may know"): seat views, the
spectator view, the partners' last-hand option, the full view and the event feed.

The exhaustive "no view ever shows a card its seat may not know" check over random deals
is in test_rules_properties.py; these tests pin the behaviour on concrete deals."""

import json
import random

import pytest

from games.rules import (
    CARDS,
    Card,
    Deal,
    DealNotOverError,
    FullView,
    RulesError,
    SeatView,
    deal_events,
    full_view,
    seat_view,
    shuffled_deck,
    spectator_view,
)


def positions(players, seed="views", rng_seed=0):
    """(deal copy) at every ply of one random deal, from the start to the end."""
    deal = Deal(players, 1, shuffled_deck(f"{seed}-{players}"))
    rng = random.Random(rng_seed)
    states = [deal.copy()]
    while not deal.is_over:
        deal.play(rng.choice(deal.legal_moves()))
        states.append(deal.copy())
    return states


def finished(players, seed="done"):
    return positions(players, seed)[-1]


@pytest.mark.parametrize("players", [2, 4])
def test_a_seat_view_has_exactly_its_own_hand(players):
    for deal in positions(players):
        for seat in range(players):
            view = seat_view(deal, seat)
            assert view.seat == seat
            assert view.team == seat % 2
            assert view.hand == tuple(deal.hands[seat])
            assert view.hand_sizes == tuple(len(h) for h in deal.hands)
            assert view.to_dict()["hand"] == [c.code for c in deal.hands[seat]]


@pytest.mark.parametrize("players", [2, 4])
def test_legal_moves_appear_only_on_the_seats_turn(players):
    for deal in positions(players):
        for seat in range(players):
            view = seat_view(deal, seat)
            if seat == deal.turn:
                assert view.legal == tuple(deal.legal_moves())
                assert view.legal  # never an empty turn
            else:
                assert view.legal == ()


@pytest.mark.parametrize("players", [2, 4])
def test_the_public_parts_of_a_view_follow_the_deal(players):
    for deal in positions(players):
        view = seat_view(deal, 0)
        assert view.briscola is deal.briscola
        assert view.trump == deal.trump
        assert view.stock_count == deal.stock_count
        assert view.briscola_on_table == deal.briscola_on_table
        assert view.briscola_holder == deal.briscola_holder
        assert view.points == tuple(deal.points)
        assert view.turn == deal.turn and view.ply == deal.ply
        assert view.played == list(deal.moves)
        assert [c for _, c in view.table] == deal.table
        assert [s for s, _ in view.table] == deal.table_seats()
        assert [(t.leader, t.cards, t.winner, t.points) for t in view.tricks] == [
            tuple(t) for t in deal.tricks
        ]
        for trick in view.tricks:
            assert trick.seats == tuple((trick.leader + i) % players for i in range(players))
        assert view.over == deal.is_over and view.winner == deal.winner


@pytest.mark.parametrize("players", [2, 4])
def test_a_spectator_view_has_no_hand(players):
    for deal in positions(players):
        view = spectator_view(deal)
        assert view.seat is None and view.team is None
        assert view.hand == ()
        assert view.partner_hand is None
        assert view.legal == ()
        data = view.to_dict()
        assert data["hand"] == [] and data["partner_hand"] is None and data["legal"] == []


def test_partner_hand_only_with_empty_stock_only_four_players_only_with_the_option():
    shown_at = []
    for deal in positions(4):
        for seat in range(4):
            view = seat_view(deal, seat)
            off = seat_view(deal, seat, partners_last_hand=False)
            assert off.partner_hand is None
            if deal.stock_count == 0 and not deal.is_over:
                assert view.partner_hand == tuple(deal.hands[(seat + 2) % 4])
                assert view.to_dict()["partner_hand"] == [
                    c.code for c in deal.hands[(seat + 2) % 4]
                ]
                shown_at.append(deal.ply)
            else:
                assert view.partner_hand is None
    # The last three tricks: plies 28..39 (cards 29 to 40), seen by all four seats.
    assert sorted(set(shown_at)) == list(range(28, 40))
    for deal in positions(2):
        for seat in range(2):
            assert seat_view(deal, seat).partner_hand is None
    for deal in positions(4):
        assert spectator_view(deal).partner_hand is None


def test_partner_hand_is_the_partners_not_an_opponents():
    deal = [d for d in positions(4, "partner") if d.stock_count == 0][0]
    assert [len(h) for h in deal.hands] == [3, 3, 3, 3]
    for seat in range(4):
        shown = set(seat_view(deal, seat).partner_hand)
        assert shown == set(deal.hands[(seat + 2) % 4])
        assert shown.isdisjoint(deal.hands[(seat + 1) % 4])
        assert shown.isdisjoint(deal.hands[(seat + 3) % 4])


def test_a_seat_outside_the_deal_is_refused():
    deal = Deal(2, 0, shuffled_deck("seats"))
    for seat in (-1, 2, 4):
        with pytest.raises(RulesError):
            seat_view(deal, seat)


@pytest.mark.parametrize("players", [2, 4])
def test_full_view_refuses_before_the_end(players):
    for deal in positions(players)[:-1]:
        with pytest.raises(DealNotOverError) as caught:
            full_view(deal)
        assert caught.value.code == "deal_not_over"
        assert caught.value.status == 403
        assert isinstance(full_view(deal, before_end=True), FullView)


@pytest.mark.parametrize("players", [2, 4])
def test_full_view_after_the_end_has_deck_initial_hands_and_moves(players):
    deal = finished(players)
    view = full_view(deal)
    assert view.deck == deal.deck
    assert view.moves == tuple(deal.moves)
    assert sorted(view.moves) == list(CARDS)
    first = (deal.dealer + 1) % players
    for seat in range(players):
        expected = tuple(deal.deck[i] for i in range(3 * players) if (first + i) % players == seat)
        assert view.initial_hands[seat] == expected
    assert view.hands == ((),) * players
    assert view.stock == ()
    assert len(view.draws) == 40 - 3 * players
    assert view.public.seat is None
    data = view.to_dict()
    assert data["deck"] == [c.code for c in deal.deck]
    assert data["moves"] == [c.code for c in deal.moves]
    assert data["initial_hands"] == [[c.code for c in h] for h in view.initial_hands]
    assert data["draws"] == [[d.seat, d.card.code] for d in deal.draws]
    assert json.loads(json.dumps(data)) == data


def test_full_view_before_end_shows_the_secret_stock():
    deal = Deal(2, 0, shuffled_deck("admin"))
    view = full_view(deal, before_end=True)
    assert view.stock == deal.deck[7:] + (deal.deck[6],)
    assert view.hands == tuple(tuple(h) for h in deal.hands)


@pytest.mark.parametrize("players", [2, 4])
def test_seat_view_round_trips_through_its_dict_and_json(players):
    for deal in positions(players, "roundtrip"):
        views = [seat_view(deal, s) for s in range(players)]
        views += [spectator_view(deal), seat_view(deal, 0, partners_last_hand=False)]
        for view in views:
            data = view.to_dict()
            assert SeatView.from_dict(data) == view
            assert SeatView.from_dict(json.loads(json.dumps(data))) == view


def _valid_view_dict():
    return seat_view(Deal(4, 0, shuffled_deck("malformed")), 1).to_dict()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("players", "two"),
        ("points", [1]),
        ("hand_sizes", None),
        ("table", [{"seat": 0}]),
        ("tricks", [{"leader": 0}]),
        ("briscola", None),
    ],
)
def test_seat_view_from_dict_refuses_malformed_input(field, value):
    data = _valid_view_dict()
    data[field] = value
    with pytest.raises(RulesError):
        SeatView.from_dict(data)
    del data[field]
    with pytest.raises(RulesError):
        SeatView.from_dict(data)
    with pytest.raises(RulesError):
        SeatView.from_dict({})


def test_seat_view_from_dict_refuses_a_bad_card():
    data = seat_view(Deal(2, 0, shuffled_deck("bad")), 1).to_dict()
    data["hand"][0] = "Zz"
    with pytest.raises(RulesError):
        SeatView.from_dict(data)
    data["hand"] = "Ad"
    with pytest.raises(RulesError):
        SeatView.from_dict(data)


# -- the event feed ---------------------------------------------------------------------


def card_events(events, kind):
    return [e for e in events if e["type"] == kind]


@pytest.mark.parametrize("players", [2, 4])
def test_every_viewer_gets_the_same_events_in_the_same_order(players):
    for deal in positions(players, "events"):
        feeds = [deal_events(deal, seat) for seat in [*range(players), None]]
        shapes = {tuple((e["type"], e.get("seat")) for e in feed) for feed in feeds}
        assert len(shapes) == 1
        assert len({len(feed) for feed in feeds}) == 1


@pytest.mark.parametrize("players", [2, 4])
def test_other_seats_dealt_and_drawn_cards_are_hidden_during_the_deal(players):
    for deal in positions(players, "hidden")[:-1]:
        for viewer in [*range(players), None]:
            events = deal_events(deal, viewer)
            for event in card_events(events, "hand_dealt"):
                if event["seat"] == viewer:
                    dealt = deal.deck[: 3 * players]
                    first = (deal.dealer + 1) % players
                    own = dealt[(viewer - first) % players :: players]
                    assert event["cards"] == [c.code for c in own]
                else:
                    assert event["cards"] is None
            for event in card_events(events, "card_drawn"):
                if event["briscola"]:
                    assert event["card"] == deal.briscola.code  # the face-up card is public
                elif event["seat"] == viewer:
                    assert Card.from_code(event["card"]) in deal.deck
                else:
                    assert event["card"] is None
            assert not card_events(events, "deal_ended")


@pytest.mark.parametrize("players", [2, 4])
def test_own_draws_are_shown_to_the_drawer(players):
    deal = positions(players, "own")[-2]  # one card before the end: all draws are done
    for viewer in range(players):
        events = deal_events(deal, viewer)
        mine = [e["card"] for e in card_events(events, "card_drawn") if e["seat"] == viewer]
        expected = [d.card.code for d in deal.draws if d.seat == viewer]
        assert mine == expected


@pytest.mark.parametrize("players", [2, 4])
def test_the_face_up_briscola_draw_is_public(players):
    deal = positions(players, "public")[-2]
    for viewer in [*range(players), None]:
        draws = card_events(deal_events(deal, viewer), "card_drawn")
        public = [e for e in draws if e["briscola"]]
        assert len(public) == 1
        assert public[0]["card"] == deal.briscola.code
        assert draws[-1] is public[0]  # it is the last card drawn
        holder = [d.seat for d in deal.draws if d.card is deal.briscola]
        assert public[0]["seat"] == holder[0]


@pytest.mark.parametrize("players", [2, 4])
def test_after_the_end_every_viewer_sees_everything(players):
    deal = finished(players, "after")
    feeds = [deal_events(deal, viewer) for viewer in [*range(players), None]]
    assert all(feed == feeds[0] for feed in feeds)
    events = feeds[0]
    for event in card_events(events, "hand_dealt"):
        assert event["cards"] is not None and len(event["cards"]) == 3
    assert all(e["card"] is not None for e in card_events(events, "card_drawn"))
    ended = card_events(events, "deal_ended")
    assert ended == [
        {
            "type": "deal_ended",
            "points": deal.points,
            "winner": deal.winner,
            "drawn": deal.is_drawn,
        }
    ]
    assert events[-1] is ended[0]


@pytest.mark.parametrize("players", [2, 4])
def test_events_tell_the_deal_in_order(players):
    deal = positions(players, "story")[-7]  # mid-trick near the end
    events = deal_events(deal, 0)
    assert events[0] == {
        "type": "deal_started",
        "dealer": deal.dealer,
        "briscola": deal.briscola.code,
        "first_to_play": (deal.dealer + 1) % players,
    }
    played = card_events(events, "card_played")
    assert [e["card"] for e in played] == [c.code for c in deal.moves]
    assert [e["ply"] for e in played] == list(range(deal.ply))
    won = card_events(events, "trick_won")
    assert [(e["winner"], e["points"]) for e in won] == [(t.winner, t.points) for t in deal.tricks]
    assert len(card_events(events, "card_drawn")) == len(deal.draws)
    json.dumps(events)  # plain JSON
