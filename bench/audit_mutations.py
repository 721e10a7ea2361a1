# ruff: noqa: E501  (the mutated lines are quoted whole)
"""Mutation score of the secrecy detector: does each weakening of it fail its proof?

    .venv/bin/python bench/audit_mutations.py [--only SUBSTRING] [--keep]

The detector is ``tests/leak_audit.py``; its proof is ``tests/hardening/test_leak_detector.py``.
Each mutation below changes one line of the detector (the line must be found exactly once,
or the script stops: a mutation that no longer applies is a bug here, not a pass). For each,
the working tree (without ``.venv`` and ``.git``) is copied to a scratch directory, the line
is changed there, and the proof is run with pytest; the mutation is *killed* if the proof
fails. The unmutated copy is run first and must pass. The score is killed / total, printed
with the survivors; the mutations marked ``weakens`` make the detector search less or
allow more, and every one of those must be killed (the exit status is 1 otherwise).

The database is the one of ``DATABASE_URL`` with ``_mutations`` appended to its name (pytest
makes ``test_<name>`` of it and keeps it between runs, ``--reuse-db``), so a run does not
touch the database of another test run. Services as for the tests (PostgreSQL).

Mutations kept on purpose though they cannot be killed (they change nothing the detector
decides) are marked ``weakens=False`` with the reason in ``why``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DETECTOR = "tests/leak_audit.py"
PROOF = "tests/hardening/test_leak_detector.py"


@dataclass(frozen=True)
class Mutation:
    name: str
    old: str
    new: str
    weakens: bool = True
    why: str = ""


MUTATIONS = [
    # What is searched.
    Mutation("JSON keys not searched", "            yield str(key)\n", "            pass\n"),
    Mutation(
        "decoded JSON not searched (raw text instead)",
        '            texts = [*body.texts, "\\x00".join(json_strings(stripped))]',
        "            texts = [*body.texts, text]",
    ),
    Mutation(
        "headers not searched",
        '    return "\\n".join(f"{k}: {v}" for k, v in response.items())',
        '    return ""',
    ),
    Mutation(
        "header names not searched",
        '    return "\\n".join(f"{k}: {v}" for k, v in response.items())',
        '    return "\\n".join(f"{v}" for k, v in response.items())',
    ),
    Mutation(
        "HTML entities not unescaped (page)",
        "        unescaped = html.unescape(text)",
        "        unescaped = text",
    ),
    Mutation(
        "HTML entities not unescaped (around the browsable block)",
        "                    [headers, outside, html.unescape(outside)],",
        "                    [headers, outside, outside],",
    ),
    Mutation(
        "HTML entities not unescaped (the browsable block)",
        '                payload = json.loads(html.unescape(TAG.sub("", content)))',
        '                payload = json.loads(TAG.sub("", content))',
    ),
    Mutation(
        "only whole quoted card codes",
        'CARD_TOKEN = re.compile(r"(?<![0-9A-Za-z])([A3RCF2-7][cdsb])(?![0-9A-Za-z])")',
        "CARD_TOKEN = re.compile(r'\"([A3RCF2-7][cdsb])\"')",
    ),
    Mutation(
        "a page may hold card-like tokens outside its JSON",
        "            assert not {c for t in outside for c in CARD_TOKEN.findall(t)}, (label, text)",
        "            pass",
    ),
    Mutation("seed: letter case kept", "    lowered = text.lower()", "    lowered = text"),
    Mutation(
        "seed: the whole seed only, no pieces",
        "        pieces.update(seed[i : i + size] for i in range(len(seed) - size + 1))",
        "        pass",
    ),
    Mutation(
        "the request id and the ETag not searched",
        "        header_text, digests = split_headers(header_text)",
        '        header_text, digests = split_headers(header_text)[0], ""',
    ),
    Mutation(
        "the request id and the ETag searched for the whole seed only",
        "    _pieces_in(digests, seed_pieces(seeds, DIGEST_SEED_PIECE), leaks)",
        "    _pieces_in(digests, frozenset(seeds), leaks)",
    ),
    Mutation(
        "seed: raw text not searched",
        "    for text in whole:",
        "    for text in whole[-1:]:",
    ),
    # What is secret.
    Mutation(
        "the stock is not secret",
        "        cards |= {c.code for c in state.stock}",
        "        pass",
    ),
    Mutation(
        "a viewer with no seat is given seat 0's hand",
        "        shown = set() if seat is None else {seat}",
        "        shown = {seat or 0}",
    ),
    Mutation(
        "partner's hand allowed with stock left",
        "            and state.stock_count == 0",
        "            and True",
    ),
    Mutation(
        "partner's hand allowed with the option off",
        "            and self.match.partners_last_hand",
        "            and True",
    ),
    Mutation(
        "the next seat's hand allowed instead of the partner's",
        "            shown.add((seat + 2) % n)  # docs/rules.md: partners' last hand",
        "            shown.add((seat + 1) % n)",
    ),
    Mutation(
        "partner's hand allowed at 2 players too",
        "            and n == 4",
        "            and True",
        weakens=False,
        why="at 2 players (seat + 2) % 2 is the seat itself, whose hand is shown anyway",
    ),
    Mutation(
        "the briscola kept secret (stricter)",
        "        cards.discard(state.briscola.code)  # face up: public, also once drawn",
        "        pass",
        weakens=False,
        why="stricter, not weaker: killed by a true body naming the briscola",
    ),
    # Finished deals: each check, and the rest of each kind searched.
    Mutation(
        "finished events: check removed",
        '                assert _events_match(events, expected), ("finished deal events", deal_id, events)',
        "                pass",
    ),
    Mutation(
        "finished events: the rest dropped",
        "                kept.extend(_events_rest(events, expected))",
        "                pass",
    ),
    Mutation(
        "match export: a deal not over let through",
        '                assert item.get("id") in finished, ("finished deal: exported one not over", item)',
        "                finished = {**finished, item.get('id'): next(iter(finished.values()))}",
    ),
    Mutation(
        "match export: record check removed",
        '                assert _record_matches(item["record"], deal), ("finished deal export", item)',
        "                pass",
    ),
    Mutation(
        "match export: the rest of each item dropped",
        '                rest.append({**item, "record": _without(item["record"], RECORD_CHECKED)})',
        "                pass",
    ),
    Mutation(
        "match export: the rest of each record dropped",
        '                rest.append({**item, "record": _without(item["record"], RECORD_CHECKED)})',
        '                rest.append({**item, "record": {}})',
    ),
    Mutation(
        "deal export: unknown seed let through",
        '            assert deal is not None, ("finished deal export: no such deal", payload)',
        "            deal = deal or next(iter(finished.values()))",
        weakens=False,
        why=(
            "equivalent: the record check that follows compares the export's seed with the"
            " deal's, so an unknown seed fails it (the same 'finished deal' complaint)"
        ),
    ),
    Mutation(
        "deal export: check removed",
        '            assert _record_matches(payload, deal), ("finished deal export", payload)',
        "            pass",
    ),
    Mutation(
        "deal export: the rest dropped",
        "            return _without(payload, RECORD_CHECKED)",
        "            return None",
    ),
    Mutation(
        "deal record: record check removed",
        '            assert _record_matches(payload["record"], deal), ("finished deal record", payload)',
        "            pass",
    ),
    Mutation(
        "deal record: hands check removed",
        '            assert payload.get("initial_hands") == initial, ("finished deal hands", payload)',
        "            pass",
    ),
    Mutation(
        "deal record: tricks check removed",
        '            assert payload.get("tricks") == replay["tricks"], ("finished deal tricks", payload)',
        "            pass",
    ),
    Mutation(
        "deal record: draws check removed",
        '            assert payload.get("draws") == replay["draws"], ("finished deal draws", payload)',
        "            pass",
    ),
    Mutation(
        "deal record: the rest dropped",
        '            return {**rest, "record": _without(payload["record"], RECORD_CHECKED)}',
        "            return None",
    ),
    Mutation(
        "deal record: the rest of its record dropped",
        '            return {**rest, "record": _without(payload["record"], RECORD_CHECKED)}',
        "            return rest",
    ),
    Mutation(
        "replay: position check removed",
        '            assert payload["position"] == expected, ("finished deal replay position", deal.pk)',
        "            pass",
    ),
    Mutation(
        "replay: steps count check removed",
        '            assert len(payload["steps"]) == len(steps), ("finished deal replay steps", deal.pk)',
        "            pass",
    ),
    Mutation(
        "replay: steps check removed",
        '            assert _events_match(payload["steps"], steps), ("finished deal replay steps", deal.pk)',
        "            pass",
    ),
    Mutation(
        "replay: the rest dropped",
        '            return {**rest, "steps": _events_rest(payload["steps"], steps)}',
        "            return None",
    ),
    Mutation(
        "replay: the rest of its steps dropped",
        '            return {**rest, "steps": _events_rest(payload["steps"], steps)}',
        '            return {**rest, "steps": []}',
    ),
    Mutation(
        "verify: seed check removed",
        '            assert payload.get("seed") == finished[payload["deal"]].seed, (',
        "            assert True, (",
    ),
    Mutation(
        "verify: ok check removed",
        '            assert payload.get("ok") is True, ("finished deal verify", payload)',
        "            pass",
    ),
    Mutation(
        "text export: check removed",
        '            assert cards == expected, ("finished deal text export", section)',
        "            pass",
    ),
    # The live streams (issue 13): each block, at the secrets of its event's id.
    Mutation(
        "stream: events checked against the secrets now, not at their id",
        '        moment = truth.at(event["id"])',
        "        moment = truth.at(Timeline(truth).now)",
    ),
    Mutation(
        "stream: an event's detail not checked to be the match at its id",
        "        _check_placed(event, moment)",
        "        pass",
    ),
    Mutation(
        "stream: the SSE lines besides data not searched",
        '        self._search(moment, viewer, "application/json", data, other, f"{wire} {label}")',
        '        self._search(moment, viewer, "application/json", data, "", f"{wire} {label}")',
    ),
    Mutation(
        "stream: a move's card left out unchecked",
        '        assert move.get("card") == deal.state.moves[ply].code, ("stream event move", move)',
        "        pass",
    ),
    Mutation(
        "stream: a move of a ply not played let through",
        '        assert 0 <= ply < deal.state.ply, ("stream event move: not played", move)',
        "        ply = min(ply, deal.state.ply - 1)",
    ),
    Mutation(
        "stream: the rest of an event with a move dropped",
        '        return {**rest, "detail": self.strip(payload.get("detail"), seat)}',
        "        return {}",
    ),
    Mutation(
        "account stream: cards allowed",
        "        return EVERY_CARD",
        "        return frozenset()",
    ),
    Mutation(
        "account stream: only the live deals' seeds searched",
        '        return tuple(Deal.objects.values_list("seed", flat=True))',
        '        return tuple(Deal.objects.filter(status="active").values_list("seed", flat=True))',
    ),
    Mutation(
        "text export: a finished deal's section dropped",
        '            kept.append(CARD_TOKEN.sub("", section))  # the rest is searched (the seed, too)',
        "            pass",
        weakens=False,
        why=(
            "every card token of such a section was just checked to be the deal's own; the"
            " seed search reads the raw text (Body.whole), not these texts"
        ),
    ),
]


def copy_tree(target: Path) -> None:
    shutil.copytree(
        ROOT,
        target,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"
        ),
        symlinks=True,
    )


def run_proof(tree: Path, env: dict[str, str]) -> tuple[bool, float]:
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--reuse-db", PROOF],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return result.returncode == 0, time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="run the mutations whose name holds this")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy")
    args = parser.parse_args()
    mutations = [m for m in MUTATIONS if not args.only or args.only in m.name]
    source = (ROOT / DETECTOR).read_text()
    for m in mutations:
        count = source.count(m.old)
        if count != 1:
            print(f"mutation {m.name!r}: its line is found {count} times in {DETECTOR}")
            return 2
    env = dict(os.environ)
    url = env.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/briscola")
    env["DATABASE_URL"] = url.rstrip("/") + "_mutations"
    scratch = Path(tempfile.mkdtemp(prefix="audit-mutations-"))
    tree = scratch / "tree"
    copy_tree(tree)
    target = tree / DETECTOR
    try:
        passed, seconds = run_proof(tree, env)
        print(f"unmutated: {'passes' if passed else 'FAILS'} ({seconds:.0f} s)")
        if not passed:
            return 2
        killed, survivors = 0, []
        for m in mutations:
            target.write_text(source.replace(m.old, m.new))
            passed, seconds = run_proof(tree, env)
            target.write_text(source)
            status = "survived" if passed else "killed"
            print(f"  {status:8s} {seconds:4.0f} s  {m.name}", flush=True)
            if passed:
                survivors.append(m)
            else:
                killed += 1
        total = len(mutations)
        print(f"mutation score: {killed}/{total} killed ({100 * killed / total:.0f}%)")
        for m in survivors:
            print(f"  survivor: {m.name}" + (f" -- {m.why}" if m.why else ""))
        bad = [m for m in survivors if m.weakens]
        if bad:
            print(f"{len(bad)} surviving mutation(s) weaken the search: the proof is too weak")
            return 1
        return 0
    finally:
        if args.keep:
            print(f"scratch copy kept: {tree}")
        else:
            shutil.rmtree(scratch)


if __name__ == "__main__":
    sys.exit(main())
