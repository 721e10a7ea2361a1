"""Account writes: registration, API tokens, bot accounts."""

from django.contrib.auth import authenticate
from django.contrib.auth.hashers import make_password
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.db.models.functions import Lower
from rest_framework.authtoken.models import Token

from accounts.models import User
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


def user_register(*, username: str, password: str) -> tuple[User, str]:
    """Create a person's account and its API token; returns (user, token key).

    The name is NFKC-normalised and must be of the documented character set, not like a
    bot's (accounts.usernames). It must be new in any letter case and by its skeleton
    (no look-alike of an existing name): checked here for a clear answer, and enforced
    by the database's unique indexes, so that of concurrent registrations of one name
    exactly one wins and the others get ``username_taken``.
    """
    name = normalize(username)
    username_errors = username_problems(name)
    if username_errors:
        raise RegistrationError(details={"username": username_errors})
    taken = Q(username_key=username_skeleton(name))
    if (
        User.objects.alias(lowered=Lower("username"))
        .filter(taken | Q(lowered=name.lower()))
        .exists()
    ):
        raise UsernameTakenError(details={"username": name})
    try:
        validate_password(password, user=User(username=name))
    except ValidationError as exc:
        raise RegistrationError(details={"password": list(exc.messages)}) from exc

    try:
        with transaction.atomic():
            user = User(username=name)
            user.set_password(password)
            user.save()
            token = Token.objects.create(user=user)
    except IntegrityError as exc:  # lost a race with a concurrent registration
        raise UsernameTakenError(details={"username": name}) from exc
    return user, token.key


def token_obtain(*, username: str, password: str) -> str:
    """Return the user's API token, creating one if it was revoked.

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


def bot_account_ensure(*, level: str, copy: int = 1) -> User:
    """Get or create the bot account `bot-<level>` (idempotent; safe to run concurrently).

    ``copy`` > 1 gives `bot-<level>-<copy>`: a user holds one seat of a match, so the
    second greedy bot at a table is another account of the same level.
    """
    max_length = User._meta.get_field("bot_level").max_length or 0
    if not level or len(level) > max_length or copy < 1:
        raise ServiceError(f"Invalid bot level {level!r}.", details={"level": level})
    username = f"{BOT_USERNAME_PREFIX}{level}" + (f"-{copy}" if copy > 1 else "")
    # get_or_create re-reads the row if a concurrent call inserted it first.
    user, _ = User.objects.get_or_create(
        username=username,
        defaults={"is_bot": True, "bot_level": level, "password": make_password(None)},
    )
    if not user.is_bot or user.bot_level != level:
        raise BotAccountConflictError(details={"username": username})
    return user
