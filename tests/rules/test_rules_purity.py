"""games/rules imports only the standard library (ARCHITECTURE.md: the rules are pure)."""

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "games" / "rules"
FORBIDDEN = {"django", "rest_framework", "celery"}


def test_importing_the_package_loads_no_framework():
    code = (
        "import sys; import games.rules; import games.rules.__main__; "
        "bad=[m for m in sys.modules if m.split('.')[0] in {'django','rest_framework','celery'}]; "
        "print(bad)"
    )
    # A plain interpreter: nothing pre-configured to import Django for us.
    environment = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO")}
    environment["PYTHONPATH"] = str(ROOT)
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(level, module) for every import in a file; level > 0 is a relative import."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.extend((0, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or ""))
    return found


def test_every_import_in_the_package_is_relative_or_standard_library():
    files = sorted(PACKAGE.glob("**/*.py"))
    assert {p.name for p in files} >= {"__init__.py", "cards.py", "deal.py", "records.py"}
    offenders = []
    for path in files:
        for level, module in imports_of(path):
            if level > 0:
                continue
            if module.split(".")[0] not in sys.stdlib_module_names:
                offenders.append(f"{path.relative_to(ROOT)}: import {module}")
    assert offenders == []


def test_the_import_checker_would_notice_a_third_party_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import json\nfrom . import cards\nfrom django.db import models\nimport celery.app\n"
    )
    imports = imports_of(sample)
    assert imports == [(0, "json"), (1, ""), (0, "django.db"), (0, "celery.app")]
    outside = [
        m for level, m in imports if level == 0 and m.split(".")[0] not in sys.stdlib_module_names
    ]
    assert outside == ["django.db", "celery.app"]
