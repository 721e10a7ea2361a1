"""Account writes: registration, API tokens, personal access tokens, bot accounts."""

import hashlib
import secrets
from collections.abc import Callable
from datetime import timedelta

from django.contrib.auth import authenticate
from django.contrib.auth.hashers import make_password
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone
from rest_framework.authtoken.models import Token

from accounts.models import AccessToken, TokenScope, User
from accounts.usernames import BOT_PREFIX, normalize, username_problems, username_skeleton
from briscola_service.exceptions import ServiceError

BOT_USERNAME_PREFIX = BOT_PREFIX


class RegistrationError(ServiceError):
    code = "invalid_registration"
    status = 400
    message = "The user name or password is not acceptable."


class UsernameTakenError(ServiceError):
    code = "username_taken"
    status = 409
    message = "That user name is already taken."


class InvalidCredentialsError(ServiceError):
    code = "invalid_credentials"
    status = 401
    message = "Wrong user name or password."


class BotAccountConflictError(ServiceError):
    code = "bot_account_conflict"
    status = 409
    message = "A non-bot account holds the bot's user name."


def _entries(code: str, messages: list[str]) -> list[dict[str, str]]:
    return [{"code": code, "message": m} for m in messages]


def user_register(*, username: str, password: str, bot: bool = False) -> tuple[User, str]:
    """Create an account and its API token; returns (user, token key). ``bot``: a
    third-party bot's account (shown as a bot everywhere; it plays through the API).

    The name is NFKC-normalised and must be of the documented character set, not like a
    bot's (accounts.usernames). It must be new in any letter case and by its skeleton
    (no look-alike of an existing name): checked here for a clear answer, and enforced
    by the database's unique indexes, so that of concurrent registrations of one name
    exactly one wins and the others get ``username_taken``.
    """
    name = normalize(username)
    username_errors = username_problems(name)
    if username_errors:
        raise RegistrationError(details={"username": _entries("invalid", username_errors)})
    if username_holder(name) is not None:
        raise UsernameTakenError(details={"username": name})
    try:
        validate_password(password, user=User(username=name))
    except ValidationError as exc:
        entries = [
            {"code": error.code or "invalid", "message": message}
            for error in exc.error_list
            for message in error.messages
        ]
        raise RegistrationError(details={"password": entries}) from exc

    try:
        with transaction.atomic():
            user = User(username=name, third_party_bot=bot)
            user.set_password(password)
            user.save()
            token = Token.objects.create(user=user)
    except IntegrityError as exc:  # lost a race with a concurrent registration
        raise UsernameTakenError(details={"username": name}) from exc
    return user, token.key


def username_holder(name: str, *, besides: User | None = None) -> User | None:
    """The account that holds ``name`` (normalised) already, in any letter case or by a
    look-alike (its skeleton), other than ``besides``; None if the name is free."""
    taken = Q(username_key=username_skeleton(name)) | Q(lowered=name.lower())
    others = User.objects.alias(lowered=Lower("username")).filter(taken)
    if besides is not None and besides.pk is not None:
        others = others.exclude(pk=besides.pk)
    return others.order_by("pk").first()


def token_obtain(*, username: str, password: str) -> str:
    """Return the user's API token, creating one if it was revoked. ``username`` in any
    letter case (accounts.backends).

    Bot accounts have unusable passwords, so they can never obtain a token this way.
    """
    user = authenticate(username=username, password=password)
    if not isinstance(user, User) or user.is_bot:
        raise InvalidCredentialsError()
    token, _ = Token.objects.get_or_create(user=user)
    return token.key


def token_revoke(*, user: User) -> None:
    """Delete the user's API token; the next token_obtain issues a new one."""
    Token.objects.filter(user=user).delete()


def bot_username(level: str, copy: int = 1) -> str:
    """The name of the service's bot account of ``level``: `bot-<level>`, or
    `bot-<level>-<copy>` for the second and further of one table."""
    return f"{BOT_USERNAME_PREFIX}{level}" + (f"-{copy}" if copy > 1 else "")


def bot_username_fits(username: str, level: str) -> bool:
    """Whether ``username`` is a name :func:`bot_account_ensure` gives a bot of ``level``
    (the service finds its bots by these names, and their level by the name)."""
    base = bot_username(level)
    if username == base:
        return True
    copy = username.removeprefix(base + "-")
    return (
        username.startswith(base + "-")
        and copy.isascii()
        and copy.isdigit()
        and (not copy.startswith("0") and int(copy) > 1)
    )


def bot_account_ensure(*, level: str, copy: int = 1) -> User:
    """Get or create the bot account `bot-<level>` (idempotent; safe to run concurrently).

    ``copy`` > 1 gives `bot-<level>-<copy>`: a user holds one seat of a match, so the
    second greedy bot at a table is another account of the same level.
    """
    max_length = User._meta.get_field("bot_level").max_length or 0
    if not level or len(level) > max_length or copy < 1:
        raise ServiceError(f"Invalid bot level {level!r}.", details={"level": level})
    username = bot_username(level, copy)
    # get_or_create re-reads the row if a concurrent call inserted it first.
    user, _ = User.objects.get_or_create(
        username=username,
        defaults={"is_bot": True, "bot_level": level, "password": make_password(None)},
    )
    if not user.is_bot or user.bot_level != level:
        raise BotAccountConflictError(details={"username": username})
    return user


# -- third-party bots -----------------------------------------------------------------


class BotSwitchError(ServiceError):
    code = "bot_switch_refused"
    status = 409
    message = "An account can become a bot account only before its first match."


def user_become_bot(*, user: User, has_played: Callable[[User], bool]) -> User:
    """Mark ``user`` a third-party bot's account; only before its first match (so no
    person's history is relabelled). ``has_played`` answers from the games app, which
    accounts never imports (settings.ACCOUNTS_HAS_PLAYED). Idempotent."""
    if user.third_party_bot:
        return user
    if user.is_bot or has_played(user):
        raise BotSwitchError()
    user.third_party_bot = True
    user.save(update_fields=["third_party_bot"])
    return user


# -- personal access tokens ----------------------------------------------------------

ACCESS_TOKEN_PREFIX = "bpat"  # never a DRF key (40 hexadecimal digits): 44 characters
ACCESS_TOKENS_MAX = 20
# last_used_at is written at most this often per token (not on every request).
LAST_USED_RESOLUTION = timedelta(minutes=1)


class TooManyTokensError(ServiceError):
    code = "too_many_tokens"
    status = 409
    message = f"An account has at most {ACCESS_TOKENS_MAX} personal access tokens."


class AccessTokenNotFoundError(ServiceError):
    code = "token_not_found"
    status = 404
    message = "No such personal access token."


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def access_token_create(*, user: User, name: str, scopes: list[str]) -> tuple[AccessToken, str]:
    """A new personal access token; returns (token, key). The key is shown only now."""
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()  # count under a lock
        if AccessToken.objects.filter(user=user).count() >= ACCESS_TOKENS_MAX:
            raise TooManyTokensError()
        key = ACCESS_TOKEN_PREFIX + secrets.token_hex(20)
        ordered = [s for s in TokenScope.values if s in scopes]
        token = AccessToken.objects.create(
            user=user, name=name, key_hash=_hash(key), prefix=key[:10], scopes=ordered
        )
    return token, key


def access_token_find(*, key: str) -> AccessToken | None:
    """The personal access token of ``key``, or None if it is not (or no longer) one."""
    if not key.startswith(ACCESS_TOKEN_PREFIX):
        return None
    return AccessToken.objects.select_related("user").filter(key_hash=_hash(key)).first()


def access_token_touch(*, token: AccessToken) -> None:
    """Record that ``token`` was used now (to the minute: one small write a minute)."""
    now = timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < LAST_USED_RESOLUTION:
        return
    AccessToken.objects.filter(pk=token.pk).update(last_used_at=now)
    token.last_used_at = now


def access_token_revoke(*, user: User, token_id: int | str) -> None:
    """Delete one of ``user``'s personal access tokens: its next request is 401. An id
    that cannot be one (``abc``, ``-1``, as a URL may give it) names none."""
    text = str(token_id)
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise AccessTokenNotFoundError()
    deleted, _ = AccessToken.objects.filter(user=user, pk=int(text)).delete()
    if not deleted:
        raise AccessTokenNotFoundError()
