"""User names: one normal form, a documented character set, and a skeleton for uniqueness.

A name is stored as typed, after Unicode NFKC normalisation: the full-width
``ｂｏｔ-expert``, the mathematical bold ``𝐛𝐨𝐭-expert`` and the Kelvin sign ``K``
(U+212A) become the ASCII ``bot-expert`` and ``K`` they look like.

**The character set** (checked after NFKC, for new names): 1 to 30 characters, each one of

- the ASCII letters ``a-z A-Z`` and digits ``0-9``;
- the letters of the Latin script in Latin-1 Supplement and Latin Extended-A (U+00C0 to
  U+017F, without ``×`` and ``÷``): ``à é ñ ß ø ł ő ž`` and so on, so that Italian,
  Spanish, German, Polish, ... names can be written;
- ``_``, ``-`` and ``.``, not first, not last, and never two in a row.

So no other script (a Cyrillic ``о`` in ``bоt-expert`` is refused, not mixed in), no
spaces, no invisible or control characters, no symbols.

**Uniqueness** is decided by two keys, each under a unique index in the database, so
that concurrent registrations cannot both win:

- the lowered name (``LOWER(username)``): ``Alice`` and ``alice`` are one name;
- the *skeleton* (``User.username_key``): what the name looks like, so that a name
  cannot pose as another by a look-alike character. It is computed by
  :func:`username_skeleton`, a small mapping written here after the idea of Unicode's
  confusables skeleton (UTS #39), restricted to the characters allowed above: case is
  folded first; then ``i`` (a capital ``I`` is an ``l`` in many fonts, and a small one
  would be after folding), ``l`` and the digit ``1`` are one letter, the digit ``0`` is
  ``o``, ``rn`` is ``m`` and ``vv`` is ``w``; accents are dropped (``é`` is ``e``) and the Latin
  letters with a stroke or a ligature map to their base (``ł`` ``l``, ``ø`` ``o``, ``æ``
  ``ae``, ``ß`` ``ss``, ...); and ``_``, ``-``, ``.`` are one separator. Two names with
  the same skeleton cannot both exist: ``Alice``, ``ALICE``, ``AIice`` (a capital i),
  ``A1ice`` and ``Alicé`` are one name, and so are ``ann_b``, ``ann-b`` and ``ann.b``. It
  errs on the side of refusing: ``ali`` and ``all`` are one name too (the first to
  register it keeps it).

(PyPI has no small, kept library that computes a UTS #39 skeleton; ``confusable_homoglyphs``
tells whether a string *contains* confusables, which the character set settles already,
and PyICU's spoof checker needs the ICU C library.)

Names beginning with the skeleton of ``bot-`` (``bot-``, ``B0T_``, ``bot.``, ...) are for
the service's bot accounts only.
"""

from __future__ import annotations

import re
import unicodedata

MAX_LENGTH = 30
BOT_PREFIX = "bot-"

_LATIN_EXTRA = "".join(
    chr(c) for c in range(0x00C0, 0x0180) if chr(c) not in "\u00d7\u00f7" and chr(c).isalpha()
)
_ALLOWED = re.compile(
    rf"[0-9A-Za-z{re.escape(_LATIN_EXTRA)}]+(?:[._-][0-9A-Za-z{re.escape(_LATIN_EXTRA)}]+)*"
)

# Latin letters that have no decomposition to strip, read as the letters they look like.
_BASE_LETTERS = {
    "ı": "i",  # dotless i (then read as l below, as the i)
    "ł": "l",
    "ŀ": "l",
    "đ": "d",
    "ð": "d",
    "ħ": "h",
    "ø": "o",
    "œ": "oe",
    "æ": "ae",
    "ŧ": "t",
    "ĸ": "k",
    "ŋ": "n",
    "þ": "p",
    "ß": "ss",
    "ſ": "s",
    "ĳ": "ij",
}
# Sequences that read alike in the characters allowed, applied after case folding, in
# this order (a UTS #39-style prototype for each).
_LOOK_ALIKE = (("rn", "m"), ("vv", "w"), ("0", "o"), ("1", "l"), ("i", "l"))
_SEPARATORS = str.maketrans({"_": "-", ".": "-"})


def normalize(name: str) -> str:
    """The stored form of a name: NFKC (no other change: the case stays as typed)."""
    return unicodedata.normalize("NFKC", name)


def lookup_key(name: str) -> str:
    """What a name is looked up by, as the database's unique index on LOWER(username)."""
    return normalize(name).lower()


def has_control_characters(name: str) -> bool:
    """NUL and other control or format characters: never part of any name."""
    return any(unicodedata.category(ch) in ("Cc", "Cf", "Cs") for ch in name)


def username_skeleton(name: str) -> str:
    """What the name looks like (see the module's docstring): equal skeletons, one name."""
    text = unicodedata.normalize("NFD", normalize(name).lower())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = "".join(_BASE_LETTERS.get(ch, ch) for ch in text).casefold()
    for seen, reads_as in _LOOK_ALIKE:
        text = text.replace(seen, reads_as)
    return text.translate(_SEPARATORS)


def username_problem(name: str) -> str | None:
    """Why ``name`` (already normalised) cannot be a new person's name, as a code:
    ``required``, ``too_long``, ``characters`` or ``reserved`` (a bot's name); None when
    it can. The admin's forms say each in the page's language."""
    if not name:
        return "required"
    if len(name) > MAX_LENGTH:
        return "too_long"
    if not _ALLOWED.fullmatch(name):
        return "characters"
    if username_skeleton(name).startswith(username_skeleton(BOT_PREFIX)):
        return "reserved"
    return None


PROBLEMS = {
    "required": "A user name is required.",
    "too_long": f"A user name is at most {MAX_LENGTH} characters.",
    "characters": (
        "A user name uses letters (ASCII, or Latin letters with accents such as é, ñ, "
        "ø, ł), digits, and single '_', '-' or '.' between them."
    ),
    "reserved": f"User names starting with '{BOT_PREFIX}' (or like it) are reserved for bots.",
}


def username_problems(name: str) -> list[str]:
    """Why ``name`` (already normalised) cannot be a new person's name; [] when it can."""
    problem = username_problem(name)
    return [PROBLEMS[problem]] if problem else []
