"""Who may sign in: people. Bot accounts play through the service's own workers only."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.backends import ModelBackend

from briscola_service import throttling


class PeopleOnlyBackend(ModelBackend):
    """Django's model backend (username and password; session logins of the admin and the
    browsable API), refusing bot accounts even if someone gave one a password: a bot's
    moves come from the bot task, never from a login. Sessions of such an account stop
    working too (``get_user`` asks the same question)."""

    def authenticate(
        self, request: Any, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> Any:
        """Every password check made for a request (the admin's and the browsable API's login
        forms) is throttled per client IP and per user name first: ``Throttled`` (429) over
        either (see briscola_service.throttling; the API's token and register endpoints
        count the same attempts in their views)."""
        if request is not None and password is not None:
            throttling.check_password_attempt(request, str(username or ""))
        return super().authenticate(request, username=username, password=password, **kwargs)

    def user_can_authenticate(self, user: Any) -> bool:
        return super().user_can_authenticate(user) and not getattr(user, "is_bot", False)
