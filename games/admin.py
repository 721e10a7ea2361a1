"""Django admin: everything visible, nothing about a game editable or deletable."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html

from briscola_service.admin import ReadOnlyMixin
from games.matches.selectors import staff_powers
from games.models import Deal, DealStatus, Match, Move, Seat

# The query parameter that shows a live deal's seed on its admin page.
REVEAL = "reveal_live_deal"


class SeatInline(ReadOnlyMixin, admin.TabularInline):  # type: ignore[type-arg]
    model = Seat
    fields = ("number", "user", "joined_at")
    readonly_fields = fields
    extra = 0


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
    list_display = (
        "id",
        "players",
        "format",
        "status",
        "deals_won_team0",
        "deals_won_team1",
        "winner_team",
        "public",
        "rated",
        "created_by",
        "created_at",
    )
    list_filter = ("status", "players", "format", "public", "rated", "end_reason")
    search_fields = ("id", "created_by__username", "seats__user__username")
    date_hierarchy = "created_at"
    inlines = [SeatInline, DealInline]


@admin.register(Deal)
class DealAdmin(ReadOnlyMixin, admin.ModelAdmin):  # type: ignore[type-arg]
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
    inlines = [MoveInline]
    readonly_fields = ("replay_link", "seed_hidden")

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

    @admin.display(description="Replay")
    def replay_link(self, obj: Deal) -> str:
        url = reverse("replay-page", kwargs={"deal_id": obj.pk})
        return format_html('<a href="{}">Replay this deal step by step</a>', url)


@admin.register(Move)
class MoveAdmin(ReadOnlyMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("id", "deal", "ply", "seat", "card", "created_at")
    list_filter = ("seat",)
    search_fields = ("deal__match__id", "card")
