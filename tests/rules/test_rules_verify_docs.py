"""docs/verify.md's standalone reference shuffle gives the same decks as games.rules."""

import re
from pathlib import Path

from games.rules import seed_commitment, shuffled_deck

DOC = Path(__file__).parents[2] / "docs" / "verify.md"


def test_the_documented_reference_snippet_matches_the_engine():
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1
    namespace: dict = {}
    exec(compile(blocks[0], str(DOC), "exec"), namespace)
    for seed in ["abc", "9499aa782eda7f98d355d066fcd6f16e-1", "Ünïcode", 12345]:
        assert namespace["briscola_deck"](seed) == [c.code for c in shuffled_deck(seed)]
        assert namespace["commitment"](seed) == seed_commitment(seed)
