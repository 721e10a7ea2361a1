"""The replay page, ``/replay/<deal id>/``: a card table over the replay API.

The page is only a shell: everything it shows comes from ``GET /api/v1/deals/{id}/replay``
(session authentication), which decides what the viewer may see. Anonymous visitors may
watch a public match's deals once they are over (the API allows exactly that); for any
other deal they are sent to sign in first (the play pages' sign-in, settings.LOGIN_URL,
which links to sign-up). A private match's deals are shown only to its players and to
administrators (anyone else gets the 404 page of a deal that does not exist: deal ids are
counted, and a 403 would say the deal is there). The page links to the match's other deals and, for
its players, to the match's table. It speaks the play pages' languages (English or Italian,
Django's i18n: the browser's Accept-Language, or the switch in its top bar), its script's
words travelling inside the page as JSON (games/play/strings.py).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render, resolve_url
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from briscola_service.exceptions import not_found_page
from games.errors import DealNotFoundError
from games.matches import selectors
from games.models import DealStatus, EndReason, Match, MatchEvent, MatchEventKind, Seat
from games.play.strings import format_names, replay_strings


def page_strings() -> dict[str, object]:
    """The script's words (games/play/strings.py's ``replay_strings``) and the page's own:
    the replay API's refusals and the verification's checks, in the page's language."""
    strings = replay_strings()
    errors = strings.get("errors")
    strings["errors"] = {
        **(errors if isinstance(errors, dict) else {}),
        "replay_seat_forbidden": _(
            "While the deal is being played you may replay it only from your own seat."
        ),
        "replay_beyond_present": _(
            "While the deal is being played you may replay it only up to the present."
        ),
        "deal_not_over": _("This deal is still being played: its replay opens when it is over."),
    }
    strings["verify"] = {
        "checking": _("Checking the deal…"),
        "ok": _("Verified: everything checks."),
        "failed": _("The verification found a problem."),
        "passed": _("passed"),
        "not_passed": _("failed"),
        "checks": {
            "commitment": _("The seed matches the commitment published when the deal began"),
            "deck": _("The seed shuffles to the deck that was played"),
            "moves": _("Every move follows the rules"),
            "result": _("The moves give the recorded points and winner"),
            "move_seats": _("Each move was played by the seat whose turn it was"),
        },
    }
    return strings


def abandoned_why(match: Match, seats: list[Seat]) -> str:
    """Why a deal was abandoned, from what the match's detail and events say (its
    ``end_reason``, its ``winner``, the seat of its ``seat_timed_out`` event): lost on time
    by whom, resigned by whom, called off."""
    names = [s.user.username if s.user else _("open seat") for s in seats]
    reason = match.end_reason
    loser = None if match.winner_team is None else 1 - match.winner_team
    side = [names[n] for n in range(match.players) if loser is not None and n % 2 == loser]
    timed_out = (
        MatchEvent.objects.filter(match=match, kind=MatchEventKind.SEAT_TIMED_OUT)
        .order_by("-id")
        .values_list("data", flat=True)
        .first()
    )
    seat = timed_out.get("seat") if isinstance(timed_out, dict) else None
    late = names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else None
    if reason == EndReason.TIMEOUT and (late or side):
        return _("Abandoned: lost on time by %(name)s") % {"name": late or " & ".join(side)}
    if reason == EndReason.ABANDONED and (late or side):
        return _("Abandoned: %(name)s did not play for too long") % {
            "name": late or " & ".join(side)
        }
    if reason == EndReason.RESIGNED and side:
        if len(side) == 1:
            return _("Abandoned: resigned by %(name)s") % {"name": side[0]}
        return _("Abandoned: resigned by the team of %(names)s") % {"names": " & ".join(side)}
    if reason == EndReason.ABORTED:
        return _("Abandoned: called off, a player resigned before everyone had played a card")
    if reason == EndReason.ABORT_WINDOW:
        if late:
            return _("Abandoned: called off, %(name)s never played a first card") % {"name": late}
        return _("Abandoned: called off, a first card was never played")
    return _("Abandoned (the match ended during the deal)")


@require_GET
def replay_page(request: HttpRequest, deal_id: int) -> HttpResponse:
    # A deal the viewer may not see answers as one that does not exist (deal ids are
    # sequential: nobody may learn that a private deal is there): an anonymous visitor is
    # sent to sign in for both, a signed-in one gets the site's 404 page for both (raising
    # Http404 would show Django's technical page under DEBUG).
    user = request.user
    try:
        deal = selectors.deal_get(deal_id=deal_id, viewer=user)
    except DealNotFoundError:
        if not user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        return not_found_page(request, _("No such deal."))
    # Found with the viewer: a public match's deal, or one an administrator or a seated
    # viewer may see (deal_get); an anonymous visitor signs in for one still being played.
    match = deal.match
    if not user.is_authenticated and not deal.is_over:
        return redirect_to_login(request.get_full_path())
    seats = selectors.match_seats(match)
    mine = selectors.seat_of_user(seats, user) if user.is_authenticated else None
    # What the page offers is what the API allows (games/replays/selectors.py): every
    # seat and the record once the deal is over; before that, to an administrator who
    # holds no seat in the match (staff_powers: one who plays is a player like the others)
    # and to nobody else; a player, their own seat only.
    admin = selectors.staff_powers(user, seats) if user.is_authenticated else False
    can_see_all = deal.is_over or admin
    # A deal still being played, to such an administrator: every hand and the record (its
    # seed) give the game away, so the page opens with the hands hidden and shows them
    # only when asked, with a warning, as the admin's deal page does with the seed.
    guarded = admin and not deal.is_over
    # Anyone else, a deal still being played (a public match's, to someone with no seat in
    # it): the API would refuse every position (deal_not_over), so the page says so in
    # place of the table and its controls, as the table page does for a stranger.
    closed = not can_see_all and mine is None
    numbers = dict(match.deals.values_list("number", "pk"))
    strings = page_strings()
    if deal.status == DealStatus.ABANDONED:  # its events are read for this deal only
        status_name = strings["abandoned"] = abandoned_why(match, seats)  # and at its end
    else:
        status_name = {
            DealStatus.ACTIVE: _("Being played"),
            DealStatus.FINISHED: _("Finished"),
        }.get(deal.status, deal.status)
    return render(
        request,
        "games/replay.html",
        {
            "deal": deal,
            "match": match,
            "your_seat": None if mine is None else mine.number,
            "seat_names": [s.user.username if s.user else _("open seat") for s in seats],
            "format_name": format_names().get(match.format, match.format),
            "status_name": status_name,
            "strings": strings,
            "can_see_all": can_see_all,
            "guarded": guarded,
            "closed": closed,
            "closed_message": (
                _("This deal is still being played: its replay opens when it is over.")
                if closed
                else ""
            ),
            "api_url": reverse("deal-replay", kwargs={"deal_id": deal.pk}),
            "export_url": reverse("deal-export", kwargs={"deal_id": deal.pk}),
            "export_text_url": reverse("deal-export-text", kwargs={"deal_id": deal.pk}),
            "verify_url": reverse("deal-verify", kwargs={"deal_id": deal.pk}),
            # Only a deal that is over has a record to export (the API answers 403 before),
            # but to an administrator who holds no seat in the match.
            "records_open": can_see_all,
            "previous_deal": numbers.get(deal.number - 1),
            "next_deal": numbers.get(deal.number + 1),
            "deal_count": len(numbers),
            "table_url": (
                reverse("play-table", kwargs={"match_id": match.pk}) if mine is not None else ""
            ),
            "signin_url": resolve_url(settings.LOGIN_URL),
        },
    )


urlpatterns = [path("<int:deal_id>/", replay_page, name="replay-page")]
