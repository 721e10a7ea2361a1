"""Account reads: finding an account by the name someone typed."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db.models.functions import Lower

from accounts.models import User
from accounts.usernames import has_control_characters, lookup_key


def user_by_name(name: str, *, field: str = "username") -> User | None:
    """The active account whose name is ``name`` in any letter case (after NFKC), or None.

    Exactly one account can match: LOWER(username) is unique in the database. A name with
    a NUL byte or another control character is nobody's and is refused (400, under
    ``field``) rather than sent to the database, which refuses NUL in text.
    """
    if has_control_characters(name):
        raise ValidationError({field: ["A user name has no control characters (such as NUL)."]})
    return (
        User.objects.alias(lowered=Lower("username"))
        .filter(lowered=lookup_key(name), is_active=True)
        .first()
    )
