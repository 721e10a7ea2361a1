"""A revoked token closes its streams: its deletion rings its account's streams, which
then find their token gone (accounts never imports games; games listens)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete
from django.dispatch import receiver
from rest_framework.authtoken.models import Token

from games.live.bus import user_changed_on_commit


@receiver(post_delete, sender=Token, dispatch_uid="games.live.token_revoked")
def token_revoked(sender: type[Token], instance: Token, **kwargs: Any) -> None:
    user_changed_on_commit(instance.user_id, reason="token_revoked")
