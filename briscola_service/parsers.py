"""Request parsers: DRF's, with every malformed body a 400 (never a 500).

JSON is refused when nested deeper than ``MAX_JSON_DEPTH`` arrays and objects, before it
is decoded: Python's decoder recurses once per level, and about 1,000 levels (2 kB of
``[``) exhaust the interpreter's stack (a ``RecursionError``, once a 500). No body of the
API needs more than a few levels.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils.json import strict_constant

MAX_JSON_DEPTH = 32

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


class JSONTooDeepError(ParseError):
    default_detail = f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels."


def json_depth_check(text: str, *, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise JSONTooDeepError when ``text`` opens more than ``max_depth`` arrays or objects
    inside one another. Brackets within strings do not count. Linear in the text; a body
    with no more brackets than ``max_depth`` in all is not scanned."""
    if text.count("[") + text.count("{") <= max_depth:
        return
    depth = 0
    for bracket in _BRACKET.finditer(_STRING.sub("", text)):
        if bracket.group() in "[{":
            depth += 1
            if depth > max_depth:
                raise JSONTooDeepError()
        else:
            depth -= 1


def json_loads(text: str, *, strict: bool = True) -> Any:
    """``json.loads`` behind the depth limit (JSONTooDeepError); other errors as json's."""
    json_depth_check(text)
    return json.loads(text, parse_constant=strict_constant if strict else None)


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with the depth limit (JSONTooDeepError, 400)."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        encoding = parsers.get_encoding(parser_context or {})
        try:
            text = codecs.getreader(encoding)(stream).read()
            return json_loads(text, strict=self.strict)
        except RecursionError:  # a second guard: the limit is far below the stack's
            raise ParseError("JSON parse error - nested too deeply.") from None
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, strict constants
            raise ParseError(f"JSON parse error - {exc}") from None
