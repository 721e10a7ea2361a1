"""Who may sign in: people. Bot accounts play through the service's own workers only."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.backends import ModelBackend


class PeopleOnlyBackend(ModelBackend):
    """Django's model backend (username and password; session logins of the admin and the
    browsable API), refusing bot accounts even if someone gave one a password: a bot's
    moves come from the bot task, never from a login. Sessions of such an account stop
    working too (``get_user`` asks the same question)."""

    def user_can_authenticate(self, user: Any) -> bool:
        return super().user_can_authenticate(user) and not getattr(user, "is_bot", False)
