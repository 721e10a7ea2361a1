from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html_join
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _
from rest_framework.authtoken.models import TokenProxy

from accounts.models import User
from accounts.ratings import admin as ratings_admin  # noqa: F401  (registers Rating, ...)
from accounts.services import bot_username_fits, username_holder
from accounts.usernames import MAX_LENGTH, normalize, username_problem
from briscola_service.admin import SecretFieldsMixin

# The fields that make an account one of the service's own bots: its level is implied by
# its name (bot-<level>, bot-<level>-<n>; accounts.services.bot_account_ensure), by which
# the service finds it. Read-only on such an account's page.
SERVICE_BOT_FIELDS = ("username", "is_bot", "bot_level")


def bot_level_choices() -> list[tuple[str, str]]:
    """The levels there are (games.bots.LEVELS, named by settings.ACCOUNTS_BOT_LEVELS:
    accounts never imports games), after an empty choice: a person has no level."""
    return [
        ("", "---------"),
        *((level, level) for level in import_string(settings.ACCOUNTS_BOT_LEVELS)),
    ]


NAME_PROBLEMS = {
    "required": _("A user name is required."),
    "too_long": _("A user name is at most %(max)d characters."),
    "characters": _(
        "A user name uses letters (ASCII, or Latin letters with accents such as é, ñ, ø, "
        "ł), digits, and single '_', '-' or '.' between them."
    ),
    "reserved": _("User names starting with 'bot-' (or like it) are reserved for bots."),
}


def clean_name(form: forms.ModelForm, *, bot: bool = False) -> str:  # type: ignore[type-arg]
    """The form's user name checked by the API's rules (accounts.usernames, as at
    registration): NFKC, the character set, not a bot's name (unless ``bot``), and new in
    any letter case and by its skeleton (no look-alike of another account's name: the
    database's unique index refused it with a 500). A name left as it was is kept, even
    one from before the rules."""
    name = normalize(form.cleaned_data.get("username") or "")
    instance = form.instance
    if instance.pk is not None and name == instance.username:
        return name
    problem = username_problem(name)
    if problem and not (problem == "reserved" and bot):
        raise forms.ValidationError(
            NAME_PROBLEMS[problem], code=problem, params={"max": MAX_LENGTH}
        )
    holder = username_holder(name, besides=instance)
    if holder is not None:
        raise forms.ValidationError(
            _("That user name is taken: %(name)s has it, or one that looks like it."),
            code="username_taken",
            params={"name": holder.username},
        )
    return name


NAME_HELP = _(
    "Up to 30 letters (ASCII or accented Latin) and digits, with single '_', '-' or '.' "
    "between them; not like another account's name, nor a bot's (bot-...)."
)


class BriscolaUserCreationForm(AdminUserCreationForm):  # type: ignore[type-arg]
    """Django's form to add a person, whose name follows the API's rules."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].help_text = NAME_HELP

    def clean_username(self) -> str:
        return clean_name(self)


class BriscolaUserChangeForm(UserChangeForm):  # type: ignore[type-arg]
    """Django's user form, whose bot level is one of the levels there are (a typo, or
    another letter case, made every match against the bot wait for ever), and which keeps
    an account's bot fields consistent: a bot has a level and a bot's name, a person none."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "username" in self.fields:
            self.fields["username"].help_text = NAME_HELP
        if "bot_level" in self.fields:
            field = self.fields["bot_level"]
            self.fields["bot_level"] = forms.ChoiceField(
                label=field.label,
                help_text=_("A bot's strength; empty for a person."),
                choices=bot_level_choices,
                required=False,
            )

    def clean_username(self) -> str:
        # A bot's name (bot-<level>) only for an account made a bot here (clean() checks
        # that the name fits the level).
        is_bot = self.fields.get("is_bot")
        bot = is_bot is not None and is_bot.widget.value_from_datadict(
            self.data, self.files, self.add_prefix("is_bot")
        )
        return clean_name(self, bot=bool(bot))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        is_bot = data.get("is_bot", self.instance.is_bot)
        level = data.get("bot_level", self.instance.bot_level)
        username = data.get("username", self.instance.username)
        if "bot_level" not in self.fields or "bot_level" in self.errors:
            return data
        if is_bot and not level:
            self.add_error("bot_level", _("A bot account needs a level."))
        elif not is_bot and level:
            self.add_error("bot_level", _("Only a bot account has a level: leave it empty."))
        elif is_bot and username and not bot_username_fits(username, level):
            self.add_error(
                "bot_level",
                _(
                    "The service finds its bot of level %(level)s by its name, "
                    "bot-%(level)s (or bot-%(level)s-2, -3, ...): this account's name does "
                    "not fit."
                )
                % {"level": level},
            )
        return data


@admin.register(User)
class BriscolaUserAdmin(SecretFieldsMixin, UserAdmin):
    # A user's API token (its key is the token's primary key, which Django lets a change
    # list filter by), personal tokens' hashes and the password: never filters.
    secret_fields = ("auth_token", "access_tokens", "password")
    list_display = ("username", "is_bot", "bot_level", "is_staff", "date_joined")
    list_filter = ("is_bot", "bot_level", "is_staff")
    search_fields = ("username",)
    fieldsets = (
        *(UserAdmin.fieldsets or ()),
        ("Bot", {"fields": ("is_bot", "bot_level")}),
        (_("Games"), {"fields": ("games_links",)}),
    )
    form = BriscolaUserChangeForm
    add_form = BriscolaUserCreationForm
    readonly_fields = ("games_links",)

    @admin.display(description=_("Their pages"))
    def games_links(self, obj: User) -> str:
        """Links to the account's matches and rating changes (the lists, filtered)."""
        links = []
        for name, words, lookup in (
            ("admin:games_match_changelist", _("Matches"), "seats__user__id__exact"),
            ("admin:accounts_ratingchange_changelist", _("Rating changes"), "user__id__exact"),
        ):
            try:
                links.append((f"{reverse(name)}?{lookup}={obj.pk}", words))
            except NoReverseMatch:  # the games app is not installed
                continue
        return format_html_join(" · ", '<a href="{}">{}</a>', links) or "-"

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = tuple(super().get_readonly_fields(request, obj))
        if obj is not None and obj.is_bot:
            # One of the service's bots: its name and level are the service's.
            return (*fields, *SERVICE_BOT_FIELDS)
        return fields


# REST framework's own token admin lists every account's key in clear (in each row's
# label, as the token's name), which lets anyone with the admin act as any player, and read
# a seat's hand through that player's token, even a staff member who plays in the match.
# The admin lists no tokens: a user revokes their own (POST /api/v1/auth/token/revoke,
# DELETE /api/v1/auth/tokens/<id>), and an administrator stops an account by making it
# inactive, which ends its tokens, sessions and streams at once.
if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)
