"""The sign-up and sign-in forms: the same rules and errors as the API's."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.forms import AuthenticationForm
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext, pgettext_lazy

from accounts.models import User
from accounts.services import RegistrationError, UsernameTakenError, user_register


class FocusOnErrorMixin:
    """The field a page shown again with errors puts the focus in (``autofocus``,
    games/templates/games/play/form.html): the first field in error, or the first field
    when the error is the whole form's (a failed sign-in), so that a keyboard or screen
    reader user lands on what to correct and hears its error (``aria-describedby``)."""

    @property
    def focus_field(self) -> str | None:
        form: Any = self
        if not form.is_bound or not form.errors:
            return None
        names = list(form.fields)
        if form.non_field_errors():
            return names[0] if names else None
        return next((name for name in names if name in form.errors), None)


class SignUpForm(FocusOnErrorMixin, forms.Form):
    username = forms.CharField(
        label=pgettext_lazy("form label", "Username"),
        max_length=150,
        widget=forms.TextInput(attrs={"autocomplete": "username", "autocapitalize": "none"}),
    )
    password = forms.CharField(
        label=pgettext_lazy("form label", "Password"),
        max_length=128,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    user: User | None = None

    def clean(self) -> dict[str, Any]:
        """Registers the account through accounts.services.user_register, the API's own
        path: its errors land next to the field they are about."""
        data = super().clean() or {}
        if self.errors:
            return data
        try:
            self.user, _token = user_register(username=data["username"], password=data["password"])
        except UsernameTakenError:
            self.add_error("username", _("That user name is already taken."))
        except RegistrationError as exc:
            details = exc.details or {}
            for field in ("username", "password"):
                # The API's details: one {code, message} per problem (issue 16).
                for entry in details.get(field, []):
                    message = entry["message"] if isinstance(entry, dict) else str(entry)
                    self.add_error(field, message)
        return data


class SignInForm(FocusOnErrorMixin, AuthenticationForm):
    """Django's sign-in form, labelled as the sign-up form is. Its error says what is true
    here: user names are found in any letter case (accounts/backends.py), passwords are
    not (Django's own message says both "may be" case-sensitive)."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": _(
            "Wrong user name or password. The password is case-sensitive; the user name is not."
        ),
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].label = pgettext_lazy("form label", "Username")
        self.fields["password"].label = pgettext_lazy("form label", "Password")


def _django_5_2_messages(n: int) -> str:
    """Django 5.2 reworded a password rule's message and its Italian catalog has only the
    old wording: naming it here puts it in this app's catalog (games/locale), translated."""
    return ngettext(
        "This password is too short. It must contain at least %d character.",
        "This password is too short. It must contain at least %d characters.",
        n,
    )
