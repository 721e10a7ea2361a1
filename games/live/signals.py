"""A stream ends once what it was opened with no longer signs its viewer in: a revoked
token (the account's or a personal one), a signed-out or replaced session, a new password,
an account made inactive. Each of these rings the account's streams, which then look at their
credentials again (games.live.streams.CredentialWatch; accounts never imports games:
games listens)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import SESSION_KEY
from django.contrib.auth.signals import user_logged_out
from django.contrib.sessions.models import Session
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from rest_framework.authtoken.models import Token

from accounts.models import AccessToken, User
from games.live.bus import user_changed_on_commit


@receiver(post_delete, sender=Token, dispatch_uid="games.live.token_revoked")
@receiver(post_delete, sender=AccessToken, dispatch_uid="games.live.access_token_revoked")
def token_revoked(sender: type[Any], instance: Token | AccessToken, **kwargs: Any) -> None:
    user_changed_on_commit(instance.user_id, reason="credentials")


@receiver(post_save, sender=User, dispatch_uid="games.live.user_saved")
def user_saved(sender: type[User], instance: User, created: bool, **kwargs: Any) -> None:
    """A new password or an account made inactive (any save but the first: which one
    changed is not known here, and a look costs each open stream one query)."""
    if not created:
        user_changed_on_commit(instance.pk, reason="credentials")


@receiver(post_delete, sender=Session, dispatch_uid="games.live.session_ended")
def session_ended(sender: type[Session], instance: Session, **kwargs: Any) -> None:
    """A session gone without a sign-out: replaced by another account's sign-in in the same
    browser (Django flushes it), or cleared when expired."""
    user_id = instance.get_decoded().get(SESSION_KEY)
    if user_id is not None:
        user_changed_on_commit(user_id, reason="credentials")


@receiver(user_logged_out, dispatch_uid="games.live.signed_out")
def signed_out(sender: Any, request: Any, user: User | None, **kwargs: Any) -> None:
    if user is not None:
        user_changed_on_commit(user.pk, reason="credentials")
