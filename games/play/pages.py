"""The play pages: ``/play/`` (the lobby), ``/play/<match id>/`` (the table), sign up, sign in.

Each page is a shell: the lobby and the table read and write through the public API with
the session (DRF's SessionAuthentication, which checks the CSRF token on writes); no page
reads a match itself, so a page can show nothing the API would not.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render, resolve_url
from django.urls import NoReverseMatch, path, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from briscola_service import throttling
from briscola_service.exceptions import not_found_page
from games.errors import MatchNotFoundError
from games.matches import selectors
from games.play.forms import SignInForm, SignUpForm
from games.play.strings import table_strings


def _next_url(request: HttpRequest) -> str:
    """Where to go after signing up: ``next`` when it is this site's, else the lobby."""
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return wanted
    return resolve_url("play-lobby")


@require_http_methods(["GET", "POST"])
def signup_page(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect(_next_url(request))
    if request.method == "POST":
        # Registering sets a password, a hash as costly as checking one: the budget of
        # password checks per client IP and user name, as the API's auth/register has
        # (429 over it, from ThrottledLoginMiddleware).
        throttling.check_password_attempt(
            request, str(request.POST.get("username", "")), counts_failure=False
        )
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid() and form.user is not None:
        login(request, form.user, backend="accounts.backends.PeopleOnlyBackend")
        return redirect(_next_url(request))
    return render(
        request,
        "games/play/signup.html",
        {"form": form, "next": request.POST.get("next") or request.GET.get("next", "")},
    )


class SignInView(auth_views.LoginView):
    template_name = "games/play/signin.html"
    authentication_form = SignInForm
    redirect_authenticated_user = True


def _stream_url(match_id: uuid.UUID) -> str:
    """The match's live stream (GET /api/v1/matches/{id}/stream) once that route exists;
    empty until then, and the table polls the match with its ETag instead."""
    try:
        return reverse("match-stream", kwargs={"match_id": str(match_id)})
    except NoReverseMatch:
        return ""


def _account_stream_url() -> str:
    """The account's stream (GET /api/v1/stream), which the lobby listens to; empty when
    the service has no such route, and the lobby reads its lists now and then instead."""
    try:
        return reverse("account-stream")
    except NoReverseMatch:
        return ""


def _base_context() -> dict[str, Any]:
    return {"strings": table_strings()}


def lobby_levels() -> list[tuple[str, str]]:
    """The computer's levels the lobby offers, easiest first, each with its name in the
    page's language: easy (``random``), medium (``greedy``) and hard (``expert``), those
    of them the service seats. The API seats every level; the lobby keeps to three."""
    names = {"random": _("Easy"), "greedy": _("Medium"), "expert": _("Hard")}
    seatable = selectors.bot_levels_seatable()
    return [(level, name) for level, name in names.items() if level in seatable]


def lobby_strings() -> dict[str, object]:
    """The lobby's own words, beside the play pages' (games/play/strings.py): a 4-player
    match's partner and pairs, a table called off, and a form that invites more people
    than the table has seats for."""
    return {
        "with_partner": _("with %(name)s"),
        # A table of four one has no seat at, its two pairs as they sit (each pair's names
        # and open seats joined with "&"): "alice & open seat vs bob & open seat".
        "pairs": _("%(first)s vs %(second)s"),
        # A table called off before anybody else joined it (My matches).
        "nobody_joined": _("Table called off: nobody joined"),
        # A person invited to a table that was called off before they joined.
        "did_not_join": _("did not join"),
        "too_many_invited": {
            "2": _(
                "Too many names: a table of 2 has room for one other person, and %(n)s are invited."
            ),
            "4": _(
                "Too many names: a table of 4 has room for three other people, "
                "and %(n)s are invited."
            ),
        },
    }


@require_GET
@login_required
def lobby_page(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "games/play/lobby.html",
        {
            **_base_context(),
            "lobby_strings": lobby_strings(),
            "bot_levels": lobby_levels(),
            "stream_url": _account_stream_url(),
        },
    )


def _existing_match(match_id: uuid.UUID) -> Any:
    """The match, or None for an id that names none."""
    try:
        return selectors.match_get(match_id=match_id)
    except MatchNotFoundError:
        return None


@require_GET
@login_required
def table_page(request: HttpRequest, match_id: uuid.UUID) -> HttpResponse:
    # What the viewer may see of the match is the API's to say (the table asks it); an id
    # that names no match is answered here, with a 404 page, and a match the viewer may
    # not see at all with the table's page under 403, as the API's 403 match_private (the
    # table then says so; a browser audit found that page answered 200).
    match = _existing_match(match_id)
    if match is None:
        return not_found_page(request, _("No such match."))
    visible = selectors.match_visible_to(match, selectors.match_seats(match), request.user)
    return render(
        request,
        "games/play/table.html",
        {
            **_base_context(),
            "match_id": str(match_id),
            "api_url": reverse("match-detail", kwargs={"match_id": str(match_id)}),
            "stream_url": _stream_url(match_id),
            # The stream's heartbeat, how long it may be silent (live.js, its watchdog); a
            # string, so that no locale writes it "15,0".
            "heartbeat_seconds": str(settings.LIVE_HEARTBEAT_SECONDS),
            "trick_hold_ms": str(round(settings.PLAY_TRICK_HOLD_SECONDS * 1000)),
        },
        status=200 if visible else 403,
    )


@require_GET
@login_required
def match_replay_page(request: HttpRequest, match_id: uuid.UUID) -> HttpResponse:
    """``/play/<match id>/replay/`` (the lobby's "Replay"): the replay page of the match's
    first deal, which links to the others; a 404 page for a match that is none of the
    viewer's business (as the API's list would not show it) or has no deal yet."""
    match = _existing_match(match_id)
    if match is None or not selectors.match_visible_to(
        match, selectors.match_seats(match), request.user
    ):
        return not_found_page(request, _("No such match."))
    first = match.deals.order_by("number").values_list("pk", flat=True).first()
    if first is None:
        return not_found_page(request, _("No deal of this match has been dealt."))
    return redirect("replay-page", deal_id=first)


urlpatterns = [
    path("", lobby_page, name="play-lobby"),
    path("signup/", signup_page, name="play-signup"),
    path("signin/", SignInView.as_view(), name="play-signin"),
    path("signout/", auth_views.LogoutView.as_view(), name="play-signout"),
    path("<uuid:match_id>/", table_page, name="play-table"),
    path("<uuid:match_id>/replay/", match_replay_page, name="play-match-replay"),
]
