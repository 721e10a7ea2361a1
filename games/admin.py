"""Django admin: everything visible, nothing about a game editable or deletable."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib import admin, messages
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from briscola_service.admin import ReadOnlyMixin, SecretFieldsMixin
from games.clocks import selectors as clock_selectors
from games.matches.selectors import deal_state, staff_powers
from games.models import (
    Deal,
    DealStatus,
    Match,
    MatchEvent,
    MatchEventKind,
    MatchStatus,
    Move,
    Seat,
)

# The query parameter that shows a live deal's seed on its admin page.
REVEAL = "reveal_live_deal"
# A match whose bot has been to move this long is listed as stuck: the bot sweep
# (BOT_SWEEP_AFTER_SECONDS, 10 s) re-queues a reply well before.
BOT_STUCK_SECONDS = 60


def _time(value: datetime | None) -> str:
    """A time to the second (UTC, the service's zone), as the lists show it."""
    if value is None:
        return "-"
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M:%S")


def _team_names(match: Match, team: int) -> str:
    """The user names of a team's seats ("alice & carol"), from the prefetched seats."""
    seats = sorted(match.seats.all(), key=lambda s: s.number)
    return " & ".join(s.user.username if s.user else "(open)" for s in seats if s.team == team)


class SeatInline(ReadOnlyMixin, admin.TabularInline):  # type: ignore[type-arg]
    model = Seat
    fields = ("number", "user", "joined_at", "away", "timeouts_in_row", "bot_holds")
    readonly_fields = fields
    extra = 0


class MatchEventInline(ReadOnlyMixin, admin.TabularInline):  # type: ignore[type-arg]
    """What happened besides the cards (timeouts, seats taken by the bot and returned,
    invitations declined, expiry, rematch), in the order it happened."""

    model = MatchEvent
    fk_name = "match"
    fields = ("created_at", "what", "when", "facts")
    readonly_fields = fields
    extra = 0
    ordering = ("id",)
    verbose_name = _("event")
    verbose_name_plural = _("events")

    @admin.display(description=_("What"))
    def what(self, obj: MatchEvent) -> str:
        try:
            return f"{MatchEventKind(obj.kind).label} ({obj.kind})"
        except ValueError:
            return obj.kind

    @admin.display(description=_("When in the match"))
    def when(self, obj: MatchEvent) -> str:
        if obj.deal is not None:
            url = reverse("admin:games_deal_change", args=[obj.deal])
            return format_html(
                '<a href="{}">{}</a>',
                url,
                gettext("deal %(deal)s, before card %(card)s")
                % {"deal": obj.deal, "card": "-" if obj.ply is None else obj.ply + 1},
            )
        if obj.after_end:
            return gettext("after the match's end")
        return gettext("outside a deal")

    @admin.display(description=_("Facts"))
    def facts(self, obj: MatchEvent) -> str:
        names = {s.number: s.user.username if s.user else "(open)" for s in _seats_of(obj)}
        parts = []
        data = obj.data or {}
        # The seat first, then by name: PostgreSQL's jsonb keeps no order of the keys.
        for key in sorted(data, key=lambda k: (k != "seat", k)):
            value = data[key]
            if key == "seat" and value in names:
                value = f"S{value} {names[value]}"
            parts.append(f"{key}: {value}")
        return "; ".join(parts) or "-"


def _seats_of(event: MatchEvent) -> list[Seat]:
    """The event's match's seats, read once per match page."""
    cache = event.match.__dict__.setdefault("_admin_seats", None)
    if cache is None:
        cache = list(event.match.seats.select_related("user"))
        event.match.__dict__["_admin_seats"] = cache
    return cache


class StuckFilter(admin.SimpleListFilter):
    """Matches that wait for something that should have happened already."""

    title = _("stuck")
    parameter_name = "stuck"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [
            ("deadline", _("deadline passed")),
            ("bot", _("bot to move for over %(seconds)d s") % {"seconds": BOT_STUCK_SECONDS}),
            ("expired", _("waiting past its expiry")),
            ("any", _("any of these")),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Match]) -> QuerySet[Match]:
        # What the clocks' sweeps look for (games.clocks.selectors), the bot's past its
        # re-queue by far.
        deadline = Q(pk__in=clock_selectors.deadlines_due().order_by().values("pk"))
        late = clock_selectors.bot_turns_waiting(older_than_seconds=BOT_STUCK_SECONDS)
        bot = Q(pk__in=late.order_by().values("pk"))
        expired = Q(pk__in=clock_selectors.waiting_expired().order_by().values("pk"))
        chosen = {
            "deadline": deadline,
            "bot": bot,
            "expired": expired,
            "any": deadline | bot | expired,
        }.get(self.value() or "")
        return queryset if chosen is None else queryset.filter(chosen)


class DealInline(ReadOnlyMixin, admin.TabularInline):  # type: ignore[type-arg]
    model = Deal
    fields = (
        "number",
        "dealer",
        "status",
        "points_team0",
        "points_team1",
        "winner_team",
        "commitment",
    )
    readonly_fields = fields
    extra = 0
    show_change_link = True


class MoveInline(ReadOnlyMixin, admin.TabularInline):  # type: ignore[type-arg]
    model = Move
    fields = ("ply", "seat", "card", "created_at")
    readonly_fields = fields
    extra = 0
    ordering = ("ply",)


@admin.register(Match)
class MatchAdmin(ReadOnlyMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    # Few, short columns: the list fits 1280 px beside the filter panel.
    list_display = (
        "short_id",
        "who",
        "kind",
        "state",
        "score",
        "winner",
        "created",
        "clock",
    )
    list_display_links = ("short_id",)
    list_filter = (StuckFilter, "status", "players", "format", "public", "rated", "end_reason")
    search_fields = ("id", "created_by__username", "seats__user__username")
    date_hierarchy = "created_at"
    inlines = [SeatInline, DealInline, MatchEventInline]
    list_per_page = 50
    # Set once, by the database: not form fields, so shown only when named here.
    readonly_fields = ("created_at",)

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        # A user's matches, linked from the user's page.
        if lookup == "seats__user__id__exact":
            return True
        return super().lookup_allowed(lookup, value, request)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Match]:
        last_move = Move.objects.filter(deal__match=OuterRef("pk")).order_by("-id")
        return (
            super()
            .get_queryset(request)
            .prefetch_related("seats__user")
            .annotate(last_move_at=Subquery(last_move.values("created_at")[:1]))
        )

    def get_exclude(self, request: HttpRequest, obj: Any = None) -> Any:
        # Partners exist only in a match of four: the option means nothing in one of two.
        exclude = list(super().get_exclude(request, obj) or ())
        if obj is not None and obj.players != 4:
            exclude.append("partners_last_hand")
        # The expiry calls off a waiting match only: once it started (or ended) the time
        # left from its invitation means nothing (the API shows null).
        if obj is not None and obj.status != MatchStatus.WAITING:
            exclude.append("expires_at")
        return exclude

    @admin.display(description="Match", ordering="id")
    def short_id(self, obj: Match) -> str:
        return str(obj.pk)[:8]

    class Media:
        css = {"all": ("games/admin.css",)}

    @admin.display(description="Players (team 0 vs 1)")
    def who(self, obj: Match) -> str:
        return f"{_team_names(obj, 0)} vs {_team_names(obj, 1)}"

    @admin.display(description="Format", ordering="format")
    def kind(self, obj: Match) -> str:
        short = {"single": "single", "first_to_2": "to 2", "first_to_3": "to 3"}
        return f"{obj.players}p {short.get(obj.format, obj.format)}"

    @admin.display(description="Created", ordering="created_at")
    def created(self, obj: Match) -> str:
        return _time(obj.created_at)

    @admin.display(description=_("Status (end reason)"), ordering="status")
    def state(self, obj: Match) -> str:
        if obj.end_reason:
            return format_html("{}<br>({})", obj.get_status_display(), obj.get_end_reason_display())
        return obj.get_status_display()

    @admin.display(description=_("Waiting on / last move"), ordering="deadline")
    def clock(self, obj: Match) -> str:
        """Whom the match waits on, until or since when, over the last move's time."""
        return format_html(
            '{}<br><span class="last-move">{}</span>',
            self.waiting_on(obj),
            gettext("last move %(time)s") % {"time": self.last_move(obj)},
        )

    def waiting_on(self, obj: Match) -> str:
        if obj.deadline is not None:
            late = gettext(" (passed)") if obj.deadline <= timezone.now() else ""
            return gettext("S%(seat)s by %(time)s%(late)s") % {
                "seat": obj.to_move_seat,
                "time": _time(obj.deadline),
                "late": late,
            }
        if obj.bot_to_move_since is not None:
            return gettext("bot (S%(seat)s) since %(time)s") % {
                "seat": obj.to_move_seat,
                "time": _time(obj.bot_to_move_since),
            }
        if obj.status == MatchStatus.WAITING and obj.expires_at is not None:
            return gettext("players, until %(time)s") % {"time": _time(obj.expires_at)}
        return "-"

    @admin.display(description=_("Last move"), ordering="last_move_at")
    def last_move(self, obj: Match) -> str:
        return _time(getattr(obj, "last_move_at", None))

    @admin.display(description="Deals won")
    def score(self, obj: Match) -> str:
        return f"{obj.deals_won_team0}-{obj.deals_won_team1}"

    @admin.display(description="Winner", ordering="winner_team")
    def winner(self, obj: Match) -> str:
        if obj.winner_team is not None:
            return _team_names(obj, obj.winner_team)
        return "drawn" if obj.status == MatchStatus.FINISHED else "-"


@admin.register(Deal)
class DealAdmin(SecretFieldsMixin, ReadOnlyMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    secret_fields = ("seed",)
    list_display = (
        "id",
        "match",
        "number",
        "dealer",
        "status",
        "points_team0",
        "points_team1",
        "winner_team",
        "started_at",
    )
    list_filter = ("status", "match__players")
    search_fields = ("match__id", "commitment")
    ordering = ("-id",)  # indexed, as the moves'
    show_full_result_count = False
    inlines = [MoveInline]
    readonly_fields = ("replay_link", "seed_hidden", "tricks", "started_at")

    class Media:
        css = {"all": ("games/admin.css",)}

    # A live deal's seed is every hand and the stock: shown only when asked for, with a
    # warning, and never to a staff member who plays in the match.

    def _seats(self, obj: Deal) -> list[Seat]:
        return list(obj.match.seats.all())

    def _reveals(self, request: HttpRequest, obj: Deal | None) -> bool:
        if obj is None or obj.status != DealStatus.ACTIVE:
            return True
        return request.GET.get(REVEAL) == "1" and staff_powers(request.user, self._seats(obj))

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = [f for f in super().get_fields(request, obj) if f != "seed_hidden"]
        if self._reveals(request, obj):
            return fields
        return [("seed_hidden" if f == "seed" else f) for f in fields]

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        obj = self.get_object(request, object_id)
        if obj is not None and obj.status == DealStatus.ACTIVE and request.GET.get(REVEAL):
            if staff_powers(request.user, self._seats(obj)):
                messages.warning(
                    request,
                    "This deal is still being played: its seed, shown below, gives every "
                    "player's hand and the order of the stock. Do not share it, and do not "
                    "look if you may advise a player.",
                )
            else:
                messages.error(request, "You play in this match: its live seed stays hidden.")
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.display(description="Seed")
    def seed_hidden(self, obj: Deal) -> str:
        return format_html(
            "Hidden while the deal is being played: it reveals every hand and the stock. "
            '<a href="?{}=1">Show it anyway</a> (not to an administrator who plays in '
            "this match).",
            REVEAL,
        )

    @admin.display(description="Tricks")
    def tricks(self, obj: Deal) -> SafeString:
        """The deal trick by trick (leader, cards in play order, winner, points), replayed
        from its seed and move log."""
        seats = {s.number: s.user.username if s.user else "(open)" for s in obj.match.seats.all()}
        state = deal_state(obj)
        n = state.players
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    number,
                    f"S{t.leader} {seats.get(t.leader, '')}",
                    " ".join(f"{card} (S{(t.leader + i) % n})" for i, card in enumerate(t.cards)),
                    f"S{t.winner} {seats.get(t.winner, '')}",
                    t.points,
                )
                for number, t in enumerate(state.tricks, start=1)
            ),
        )
        if not state.tricks:
            return format_html("<p>{}</p>", "No trick taken yet.")
        return format_html(
            '<table class="deal-tricks"><thead><tr><th>Trick</th><th>Leader</th>'
            "<th>Cards (seat)</th><th>Winner</th><th>Points</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            rows,
        )

    @admin.display(description="Replay")
    def replay_link(self, obj: Deal) -> str:
        url = reverse("replay-page", kwargs={"deal_id": obj.pk})
        if obj.status == DealStatus.ACTIVE:
            # The replay page opens a live deal with every hand face down and shows them,
            # and the record, only when asked, under a warning, as the seed here.
            return format_html(
                '<a href="{}">Replay this deal step by step</a> (the hands and the record '
                "stay hidden until you ask, while it is being played)",
                url,
            )
        return format_html('<a href="{}">Replay this deal step by step</a>', url)


class SeatNumberFilter(admin.SimpleListFilter):
    """The seats there are (0 to 3): no SELECT DISTINCT over the whole move log."""

    title = _("seat")
    parameter_name = "seat"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(str(n), str(n)) for n in range(4)]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Move]) -> QuerySet[Move]:
        value = self.value()
        if value in {str(n) for n in range(4)}:
            return queryset.filter(seat=int(value or 0))
        return queryset


@admin.register(Move)
class MoveAdmin(ReadOnlyMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("id", "deal", "ply", "seat", "card", "created_at")
    list_filter = (SeatNumberFilter,)
    # Newest first by the primary key: the models' ordering (deal, then the match's
    # creation time, then ply) sorted the whole log through two joins on every page.
    ordering = ("-id",)
    # One count (of the filtered rows), not a second of the whole log.
    show_full_result_count = False

    class Media:
        css = {"all": ("games/admin.css",)}

    search_fields = ("deal__match__id", "card")
    readonly_fields = ("created_at",)
