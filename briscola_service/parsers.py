"""Request parsers: DRF's, with every malformed body a 400 (never a 500).

JSON is refused (400) when nested deeper than ``MAX_JSON_DEPTH`` arrays and objects:
Python's decoder recurses once per level, and about 1,000 levels (2 kB of ``[``) exhaust
the interpreter's stack (a ``RecursionError``, once a 500 at ``/records/check``); below
that, the decoded value's depth is checked. No body of the API needs more than a few
levels. Every JSON body goes through :func:`json_loads` (the parser, and the record check,
which reads its body itself).

A string (a value or a key) holding an unpaired UTF-16 surrogate (``"\\ud800"`` alone;
an escaped pair such as ``"\\ud83d\\ude00"`` is one character and welcome) is refused
too: 400 ``invalid_input``, with the code and message DRF's CharField gives the same
character (``surrogate_characters_not_allowed``), under the path of the string
(``seats[0].bot``). Python decodes such an escape to a ``str`` that no encoder accepts:
anything that went on with it (a Redis key, an error's details echoing it back) was a
500. Refusing it here, for every body, keys included, is what keeps it out of the rest.

The messages of malformed bodies are worded for people (``a number in the body has too
many digits``), not Python's (``use sys.set_int_max_str_digits()``).
"""

from __future__ import annotations

import codecs
import json
import re
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.utils.json import strict_constant
from rest_framework.validators import ProhibitSurrogateCharactersValidator

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


# A surrogate code point in a decoded string; in the text, one escaped (or one there
# already, which a strict UTF-8 decoding never gives): only then are the strings read.
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAYBE_SURROGATE = re.compile("[\ud800-\udfff]|\\\\u[dD][89a-fA-F]")


def _printable(key: str) -> str:
    """A key as it can be shown (and encoded): a surrogate as its escape, ``\\ud800``."""
    return key.encode("utf-8", "backslashreplace").decode("utf-8")


def _path(parent: str, key: str | int) -> str:
    """A field path as the error handler writes them: ``seats[0].bot``."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{_printable(key)}" if parent else _printable(key)


def json_surrogate_check(value: Any) -> None:
    """Raise ValidationError (400 ``invalid_input``) when a string of ``value``, a key
    included, holds an unpaired surrogate: under the string's path, DRF's code and
    message for it (``surrogate_characters_not_allowed``, "... U+D800."). Iterative."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
        elif isinstance(item, dict):
            found = None
            for key, child in item.items():
                found = _SURROGATE.search(key)
                if found:
                    path = _path(path, key)
                    break
                stack.append((child, _path(path, key)))
        elif isinstance(item, list):
            found = None
            stack.extend((child, _path(path, index)) for index, child in enumerate(item))
        else:
            continue
        if found:
            validator = ProhibitSurrogateCharactersValidator
            message = validator.message.format(code_point=ord(found.group()))
            raise ValidationError({path or "non_field_errors": [message]}, code=validator.code)


def json_loads(text: str, *, strict: bool = True) -> Any:
    """``json.loads`` with a depth limit: JSONTooDeepError (a 400) for a value nested deeper
    than ``MAX_JSON_DEPTH``, or so deep that the decoder ran out of stack (about 1,000
    levels: a ``RecursionError``, once a 500); and no unpaired surrogate in any string
    (ValidationError, a 400 ``invalid_input``). Other errors are json's (ValueError)."""
    try:
        value = json.loads(text, parse_constant=strict_constant if strict else None)
    except RecursionError:
        raise JSONTooDeepError() from None
    if isinstance(value, (dict, list)) and text.count("[") + text.count("{") > MAX_JSON_DEPTH:
        json_depth_check(value)
    if _MAYBE_SURROGATE.search(text):
        json_surrogate_check(value)
    return value


def parse_error_message(exc: ValueError) -> str:
    """What was wrong with a body that is not JSON, in words for people (not Python's)."""
    if isinstance(exc, UnicodeDecodeError):
        return f"the body is not valid {exc.encoding.upper()} (byte {exc.start + 1})"
    if isinstance(exc, json.JSONDecodeError):
        if exc.msg.startswith("Unexpected UTF-8 BOM"):
            return "the body starts with a byte order mark (BOM), which JSON does not allow"
        return f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
    text = str(exc)
    if "integer string conversion" in text:
        return "a number in the body has too many digits"
    if "not JSON compliant" in text:
        return "NaN, Infinity and -Infinity are not JSON numbers"
    return "the body is not valid JSON"


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with the depth limit (JSONTooDeepError, 400) and no unpaired
    surrogates (400 ``invalid_input``); its other refusals are ``malformed_request``."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        encoding = parsers.get_encoding(parser_context or {})
        try:
            text = codecs.getreader(encoding)(stream).read()
            return json_loads(text, strict=self.strict)
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, strict constants
            raise ParseError(f"JSON parse error - {parse_error_message(exc)}.") from None
