"""The expert's model of its opponents: Bayes between the greedy rules and random play."""

import random

import pytest
from bots_cases import CAPPED, permuted_deal

from games.bots import LEVELS, choose_card, expert
from games.bots.expert import GREEDY_PRIOR, _Sampler, greedy_posterior
from games.rules import Deal, seat_view, shuffled_deck


def posterior_of(view):
    return greedy_posterior(view, _Sampler(view).unseen)


def play_until(players, seed, levels, plies):
    """A deal played by ``levels`` (one per seat) for ``plies`` cards; the deal."""
    deal = Deal(players, 0, shuffled_deck(seed))
    rng = random.Random(seed)
    while deal.ply < plies:
        seat = deal.turn
        deal.play(LEVELS[levels[seat]](seat_view(deal, seat), rng, 0))
    return deal


def test_no_play_seen_is_no_evidence():
    deal = Deal(2, 1, shuffled_deck("fresh"))  # seat 0 leads
    assert posterior_of(seat_view(deal, 0)) == {1: pytest.approx(GREEDY_PRIOR)}


@pytest.mark.parametrize("players", [2, 4])
def test_the_posterior_tells_greedy_from_random_players(players):
    """Over a few deals, after 24 cards: high for greedy opponents, low for random ones."""
    means = {}
    for opponent in ("greedy", "random"):
        values = []
        for game in range(12):
            levels = ["greedy", opponent] * (players // 2)
            deal = play_until(players, f"model-{players}-{game}", levels, 24)
            seat = deal.turn if deal.turn % 2 == 0 else (deal.turn + 1) % players
            posterior = posterior_of(seat_view(deal, seat))
            assert set(posterior) == {s for s in range(players) if s % 2 == 1}
            values.extend(posterior.values())
        means[opponent] = sum(values) / len(values)
    assert means["greedy"] > 0.65
    assert means["random"] < 0.25


def test_throwing_away_trumps_and_aces_makes_random_play_likely():
    """An opponent that always plays its dearest card (trumps, then points): the rules
    would never, so after a few tricks it looks random; on the same deck, one that plays
    by the rules keeps looking greedy."""
    from games.bots.expert import _cost

    dearest = []
    for seed in ("dear-1", "dear-2", "dear-3", "dear-4"):
        found = {}
        for style in ("dearest", "greedy"):
            deal = Deal(2, 1, shuffled_deck(seed))  # seat 0 leads
            rng = random.Random(0)
            while deal.ply < 22:
                seat = deal.turn
                view = seat_view(deal, seat)
                if seat == 1 and style == "dearest":
                    card = max(deal.hands[1], key=lambda c: _cost(c, deal.trump))
                else:
                    card = LEVELS["greedy"](view, rng, 0)
                deal.play(card)
            if deal.turn == 1:
                deal.play(LEVELS["greedy"](seat_view(deal, 1), rng, 0))
            found[style] = posterior_of(seat_view(deal, 0))[1]
        assert found["dearest"] < GREEDY_PRIOR, (seed, found)
        assert found["greedy"] > GREEDY_PRIOR, (seed, found)
        dearest.append(found["dearest"])
    assert sum(dearest) / len(dearest) < 0.1


def test_the_posterior_is_a_pure_function_of_the_view():
    """The same view with the hidden cards permuted: the same posterior, to the bit."""
    rng = random.Random(3)
    for players in (2, 4):
        deal = play_until(players, f"pure-{players}", ["greedy", "random"] * (players // 2), 27)
        seat = deal.turn
        other = permuted_deal(deal, seat, rng)
        assert other.hands != deal.hands or other.stock != deal.stock
        assert posterior_of(seat_view(deal, seat)) == posterior_of(seat_view(other, seat))


@pytest.mark.parametrize("opponent", ["greedy", "random"])
def test_the_expert_stays_deterministic_against_either_model(opponent):
    """Positions where the opponent model is mixed or not: same view and seed, same card,
    and the same card once the hidden cards are permuted."""
    rng = random.Random(opponent)
    for plies in (9, 21, 27, 31):
        deal = play_until(2, f"det-{opponent}", ["greedy", opponent], plies)
        seat = deal.turn
        view = seat_view(deal, seat)
        other = seat_view(permuted_deal(deal, seat, rng), seat)
        first = choose_card("expert", view, seed="s", **CAPPED)
        assert choose_card("expert", view, seed="s", **CAPPED) is first
        assert choose_card("expert", other, seed="s", **CAPPED) is first


def test_the_greedy_rules_are_exploited_only_once_the_opponent_kept_to_them():
    """Late in 2-player deals the expert mostly sees that a greedy opponent keeps to its
    rules (GREEDY_EXPLOIT: only when the odds are overwhelming), seldom a strong one,
    whose plays are often the greedy rules' too, and never a random one; and 4-player
    deals are left alone."""
    flagged = {}
    for opponent in ("greedy", "strong", "random"):
        hits = 0
        for game in range(20):
            deal = play_until(2, f"exploit-{game}", ["neural", opponent], 27)
            if deal.turn == 1:
                deal.play(LEVELS[opponent](seat_view(deal, 1), random.Random(game), 0))
            view = seat_view(deal, 0)
            if expert._plays_greedy(view, _Sampler(view).unseen):
                hits += 1
                # Out of time to weigh the evidence: the opponent is searched as usual.
                late = expert._Deadline(lambda: 1.0, 0.0)
                assert not expert._plays_greedy(view, _Sampler(view).unseen, late)
        flagged[opponent] = hits
    assert flagged["greedy"] >= 12, flagged  # 16 of 20
    assert flagged["strong"] <= 6, flagged  # 4
    assert flagged["random"] == 0, flagged
    deal = play_until(4, "exploit-4", ["greedy"] * 4, 27)
    view = seat_view(deal, deal.turn)
    assert not expert._plays_greedy(view, _Sampler(view).unseen)


def test_against_the_greedy_rules_the_exploit_is_their_best_reply(monkeypatch):
    """From 6 cards left of 2-player deals (the stock empty: nothing hidden) against the
    greedy bot, the expert that predicts it by the greedy rules scores at least what the
    expert that assumes a perfect opponent scores, on every deal, and more on some."""

    def finish(deal, exploit):
        monkeypatch.setattr(expert, "GREEDY_EXPLOIT", 0.0 if exploit else None)
        deal = deal.copy()
        rng = random.Random(0)
        while not deal.is_over:
            seat = deal.turn
            view = seat_view(deal, seat)
            level = "expert" if seat == 0 else "greedy"
            deal.play(LEVELS[level](view, rng, 60_000, max_iterations=4))
        return expert._score_points(deal.points[0], deal.points[1])

    better = 0
    for game in range(40):
        deal = play_until(2, f"reply-{game}", ["greedy", "greedy"], 34)
        with_rules, perfect = finish(deal, True), finish(deal, False)
        assert with_rules >= perfect, game
        better += with_rules > perfect
    assert better >= 1


@pytest.mark.parametrize("players", [2, 4])
def test_the_exploit_predicts_the_greedy_bot_card_for_card(players):
    """The exploit's model of the greedy bot is the bot itself, ties included: on the hand
    in the order a deal holds it (the order the cards were drawn), on positions of random
    play where the bot's sorted hand breaks ties between equally cheap cards otherwise."""
    positions = unsorted = 0
    for game in range(150):
        deal = Deal(players, game % players, shuffled_deck(f"predict-{players}-{game}"))
        rng = random.Random(game)
        while not deal.is_over:
            seat = deal.turn
            hand = deal.hands[seat]
            predicted = expert._greedy_card(deal, hand)
            assert predicted is LEVELS["greedy"](seat_view(deal, seat), rng, 0), (game, deal.ply)
            positions += 1
            unsorted += predicted is not expert._policy_card(deal, list(hand))
            deal.play(rng.choice(hand))
    assert positions == 150 * 40
    assert unsorted > 0  # the order matters on some of these positions: the test can tell
