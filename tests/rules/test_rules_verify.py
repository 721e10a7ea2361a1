"""Verifying records (games/rules/records.py: verify_record, record_text), the optional
``commitment`` and ``result`` fields, deal_events(before_end=True), and the CLI's
``verify`` and ``text`` commands with their exit statuses."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from games.rules import (
    Deal,
    DealRecord,
    RecordError,
    RecordResult,
    deal_events,
    record_text,
    seed_commitment,
    shuffled_deck,
    verify_record,
)

ROOT = Path(__file__).parents[2]
DATA = Path(__file__).parent / "data"
SEED = "verify-me"


def played(players: int = 2, moves: int = 40) -> Deal:
    deal = Deal(players, 1, shuffled_deck(SEED))
    for _ in range(moves):
        deal.play(deal.legal_moves()[-1])
    return deal


def exported(players: int = 2, moves: int = 40) -> dict:
    deal = played(players, moves)
    result = RecordResult((deal.points[0], deal.points[1]), deal.winner)
    return DealRecord.from_deal(
        deal, seed=SEED, commitment=seed_commitment(SEED), result=result
    ).to_dict()


def failed(record: dict) -> list[str]:
    return [c.name for c in verify_record(record) if not c.ok]


@pytest.mark.parametrize("players", [2, 4])
def test_an_exported_record_verifies(players):
    record = exported(players)
    checks = verify_record(record)
    assert [c.name for c in checks] == ["commitment", "deck", "moves", "result"]
    assert all(c.ok for c in checks), checks
    assert verify_record(json.dumps(record)) == checks
    assert all(c.detail for c in checks)
    # The deck may be left out: the seed gives it.
    assert failed({k: v for k, v in record.items() if k != "deck"}) == []


def test_tampered_records_fail_the_right_check():
    record = exported()
    assert failed({**record, "commitment": "0" * 64}) == ["commitment"]
    # Another seed: its commitment is not the one published, it gives another deck, on
    # which the moves do not replay (so there is no result to compare).
    assert failed({**record, "seed": "another seed"}) == ["commitment", "deck", "moves", "result"]
    deck = list(record["deck"])
    deck[5], deck[9] = deck[9], deck[5]
    assert failed({**record, "deck": deck}) == ["deck"]
    points = record["result"]["points"]
    assert failed({**record, "result": {"points": [points[1], points[0]], "winner": 0}}) == [
        "result"
    ]
    moves = list(record["moves"])
    moves[3], moves[4] = moves[4], moves[3]
    assert failed({**record, "moves": moves}) == ["moves", "result"]
    (check,) = [c for c in verify_record({**record, "moves": moves}) if c.name == "moves"]
    assert check.detail.startswith("moves[3]: ")  # the first card out of place
    assert failed({**record, "moves": record["moves"][:20]}) == ["result"]
    without_result = {k: v for k, v in record.items() if k != "result"}
    assert failed(without_result) == ["result"]


def test_verifying_needs_a_seed_and_a_commitment():
    record = exported()
    for key in ("seed", "commitment"):
        with pytest.raises(RecordError) as info:
            verify_record({k: v for k, v in record.items() if k != key})
        assert info.value.where == key
    with pytest.raises(RecordError) as info:
        verify_record("{not json")
    assert info.value.where == "record"


def test_commitment_and_result_fields_round_trip_and_are_checked():
    record = exported()
    parsed = DealRecord.from_dict(record)
    assert parsed.commitment == seed_commitment(SEED)
    assert parsed.result == RecordResult(
        tuple(record["result"]["points"]), record["result"]["winner"]
    )
    assert parsed.to_dict() == record
    old = json.loads((DATA / "deal_2p_complete.json").read_text(encoding="utf-8"))
    assert DealRecord.from_dict(old).to_dict() == old  # records without them are unchanged
    for bad, where in [
        ({"commitment": "ABC"}, "commitment"),
        ({"commitment": 5}, "commitment"),
        ({"result": [1, 2]}, "result"),
        ({"result": {"points": [1, 2, 3], "winner": 0}}, "result.points"),
        ({"result": {"points": [1, 121], "winner": 0}}, "result.points"),
        ({"result": {"points": [1, 2], "winner": 2}}, "result.winner"),
        ({"result": {"points": [1, 2], "winner": 0, "x": 1}}, "result"),
    ]:
        with pytest.raises(RecordError) as info:
            DealRecord.from_dict({**record, **bad})
        assert info.value.where == where, bad


def test_record_text():
    record = DealRecord.from_dict(exported())
    text = record_text(record, names=["alice", "bob"])
    header, _, body = text.partition("\n\n")
    deal = played()
    assert "Players: S0 alice, S1 bob" in header and "Dealer: S1" in header
    assert f"Briscola: {deal.briscola}" in header and f"Seed: {SEED}" in header
    assert f"Commitment: {seed_commitment(SEED)}" in header
    lines = body.rstrip("\n").split("\n")
    assert len(lines) == 20
    trick = deal.tricks[6]
    assert (
        lines[6] == f"7. {trick.cards[0]} {trick.cards[1]}  winner S{trick.winner} +{trick.points}"
    )
    partial = DealRecord.from_dict(exported(moves=5))
    assert record_text(partial).rstrip("\n").split("\n")[-1].endswith("(in play)")


def test_deal_events_before_end_shows_every_card():
    deal = played(moves=9)
    hidden = deal_events(deal, None)
    shown = deal_events(deal, None, before_end=True)
    assert len(hidden) == len(shown)
    assert all(e.get("cards") is None for e in hidden if e["type"] == "hand_dealt")
    assert all(e["cards"] for e in shown if e["type"] == "hand_dealt")
    assert all(e["card"] for e in shown if e["type"] == "card_drawn")
    assert shown[-1]["type"] != "deal_ended"


def run(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "games.rules", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_verify_and_text(tmp_path):
    record = exported()
    good = tmp_path / "deal.json"
    good.write_text(json.dumps(record), encoding="utf-8")
    result = run("verify", str(good))
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["ok"] is True and [c["name"] for c in out["checks"]] == [
        "commitment",
        "deck",
        "moves",
        "result",
    ]
    tampered = {**record, "result": {"points": [0, 120], "winner": 1}}
    result = run("verify", "-", stdin=json.dumps(tampered))
    assert result.returncode == 1 and json.loads(result.stdout)["ok"] is False
    result = run("verify", "-", stdin=json.dumps({**record, "commitment": "f" * 64}))
    assert result.returncode == 1
    result = run("verify", "-", stdin=json.dumps({k: v for k, v in record.items() if k != "seed"}))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: seed:") and result.stderr.count("\n") == 1
    assert run("verify", "-", stdin="[").returncode == 2
    assert run("verify", str(tmp_path / "missing.json")).returncode == 2
    text = run("text", str(good))
    assert text.returncode == 0 and "winner S" in text.stdout and f"Seed: {SEED}" in text.stdout
