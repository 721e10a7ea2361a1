"""Request parsers: DRF's, with every malformed body a 400 (never a 500).

JSON is refused (400) when nested deeper than ``MAX_JSON_DEPTH`` arrays and objects:
Python's decoder recurses once per level, and about 1,000 levels (2 kB of ``[``) exhaust
the interpreter's stack (a ``RecursionError``, once a 500 at ``/records/check``); below
that, the decoded value's depth is checked. No body of the API needs more than a few
levels. Every JSON body goes through :func:`json_loads` (the parser, and the record check,
which reads its body itself).
"""

from __future__ import annotations

import codecs
import json
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils.json import strict_constant

MAX_JSON_DEPTH = 32


class JSONTooDeepError(ParseError):
    default_detail = f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels."


def json_depth_check(value: Any, *, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise JSONTooDeepError when the decoded ``value`` holds arrays or objects more than
    ``max_depth`` inside one another. Iterative (no recursion of its own), and it visits
    the containers only, not their strings."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= max_depth:
                    raise JSONTooDeepError()
                stack.append((child, depth + 1))


def json_loads(text: str, *, strict: bool = True) -> Any:
    """``json.loads`` with a depth limit: JSONTooDeepError (a 400) for a value nested deeper
    than ``MAX_JSON_DEPTH``, or so deep that the decoder ran out of stack (about 1,000
    levels: a ``RecursionError``, once a 500). Other errors are json's (ValueError)."""
    try:
        value = json.loads(text, parse_constant=strict_constant if strict else None)
    except RecursionError:
        raise JSONTooDeepError() from None
    if isinstance(value, (dict, list)) and text.count("[") + text.count("{") > MAX_JSON_DEPTH:
        json_depth_check(value)
    return value


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with the depth limit (JSONTooDeepError, 400)."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        encoding = parsers.get_encoding(parser_context or {})
        try:
            text = codecs.getreader(encoding)(stream).read()
            return json_loads(text, strict=self.strict)
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, strict constants
            raise ParseError(f"JSON parse error - {exc}") from None
