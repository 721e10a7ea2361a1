"""Django admin: everything visible, nothing about a game editable or deletable."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from briscola_service.admin import ReadOnlyMixin
from games.models import Deal, Match, Move, Seat


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
    readonly_fields = ("replay_link",)

    @admin.display(description="Replay")
    def replay_link(self, obj: Deal) -> str:
        url = reverse("replay-page", kwargs={"deal_id": obj.pk})
        return format_html('<a href="{}">Replay this deal step by step</a>', url)


@admin.register(Move)
class MoveAdmin(ReadOnlyMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("id", "deal", "ply", "seat", "card", "created_at")
    list_filter = ("seat",)
    search_fields = ("deal__match__id", "card")
