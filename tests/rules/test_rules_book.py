"""docs/rules.md is the project's rule book: it exists, its tables agree with games.rules,
and every reference to it in the code, tests and docs names a section it has."""

import re
import subprocess
from pathlib import Path

from games.rules import Card

ROOT = Path(__file__).parents[2]
BOOK = ROOT / "docs" / "rules.md"


def _headings() -> set[str]:
    text = BOOK.read_text(encoding="utf-8")
    return {m.group(1).strip() for m in re.finditer(r"^#{2,3} (.+)$", text, flags=re.M)}


def test_every_reference_names_a_section_of_the_rule_book():
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    cited: list[tuple[str, str]] = []
    for name in files:
        if not name.endswith((".py", ".md")) or name == "tests/rules/test_rules_book.py":
            continue
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "RULES.md" not in text, f"{name} cites RULES.md, which is not in the repo"
        for m in re.finditer(r"rules\.md(?:\]\([^)]*\))?[,:]? \"([^\"]+)\"", text):
            cited.append((name, " ".join(m.group(1).split())))  # across a line break too
    assert cited, "the code cites sections of docs/rules.md"
    headings = _headings()
    missing = [(name, section) for name, section in cited if section not in headings]
    assert missing == []


def test_the_card_table_agrees_with_the_engine():
    text = BOOK.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(.)` \| \w+ \| [^|]+ \| (\d+) \| (\d+) \|$", text, flags=re.M)
    assert len(rows) == 10
    for rank, strength, points in rows:
        card = Card.from_code(rank + "d")
        assert (card.strength, card.points) == (int(strength), int(points))
    assert [r[0] for r in rows] == list("A3RCF76542")
