"""Who may sign in: people. Bot accounts play through the service's own workers only."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError

from accounts.models import User
from accounts.selectors import user_by_name
from briscola_service import throttling


class PeopleOnlyBackend(ModelBackend):
    """Django's model backend (username and password; session logins of the admin and the
    browsable API), refusing bot accounts even if someone gave one a password: a bot's
    moves come from the bot task, never from a login. Sessions of such an account stop
    working too (``get_user`` asks the same question)."""

    def authenticate(
        self, request: Any, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> Any:
        """The account of ``username`` in any letter case (as names are unique: ``Zed``
        signs in as ``zed`` too), if ``password`` is its password.

        Every password check made for a request (the sign-in page, the admin's and the
        browsable API's login forms) is throttled first: ``Throttled`` (429) over the
        checks of the client IP, or over the failures of the name from this address or
        from all of them; each check counts as a failure until it is known not to be one
        (see briscola_service.throttling; the API's token endpoint does the same in its
        view)."""
        if username is None:
            username = kwargs.get(User.USERNAME_FIELD)
        if username is None or password is None:
            return None
        name = str(username)
        if request is not None:
            # Counted as a failure of the name from here, given back once it is not one.
            throttling.check_password_attempt(request, name)
        try:
            user = self._find(name)
            if user is None:
                # Run the hasher once anyway, as Django's ModelBackend does, so that the
                # time taken does not tell whether the name exists.
                User().set_password(password)
            elif user.check_password(password) and self.user_can_authenticate(user):
                if request is not None:
                    throttling.password_check_passed(request, name)
                return user
        except BaseException:
            if request is not None:
                throttling.password_check_passed(request, name)
            raise
        return None

    @staticmethod
    def _find(name: str) -> User | None:
        try:
            return user_by_name(name)
        except ValidationError:  # a control character: nobody's name
            return None

    def user_can_authenticate(self, user: Any) -> bool:
        return super().user_can_authenticate(user) and not getattr(user, "is_bot", False)
