"""Admin for ratings, rating changes and player statistics (models of accounts).

The recompute action replays the match history, which lives in games; accounts never
imports games, so the action queues the games task by name (briscola_service.queueing).
Everything is read-only: numbers change only through the rating task, the periodic sweep
and the recompute.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from accounts.models import PlayerStats, Rating, RatingChange
from briscola_service import queueing
from briscola_service.admin import ReadOnlyMixin


@admin.action(description="Recompute all ratings and statistics from the match history")
def recompute_all(modeladmin: Any, request: HttpRequest, queryset: QuerySet[Any]) -> None:
    """Queues games.tasks.ratings_recompute (in-process without a broker).

    The selection does not matter: the whole history is replayed.
    """
    if not queueing.task_send("games.tasks.ratings_recompute", what="ratings recompute"):
        modeladmin.message_user(
            request, "Could not queue the recompute: the broker is unreachable.", messages.ERROR
        )
        return
    modeladmin.message_user(
        request,
        "Recompute queued (done already when tasks run in-process). "
        "Also: python manage.py ratings_recompute",
        messages.SUCCESS,
    )


@admin.register(Rating)
class RatingAdmin(ReadOnlyMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = (
        "user",
        "category",
        "display",
        "provisional",
        "mu",
        "sigma",
        "games",
        "updated_at",
    )
    list_filter = ("category", "user__is_bot")
    search_fields = ("user__username",)
    actions = [recompute_all]

    class Media:
        css = {"all": ("accounts/admin.css",)}

    @admin.display(boolean=True)
    def provisional(self, obj: Rating) -> bool:
        return obj.provisional


@admin.register(RatingChange)
class RatingChangeAdmin(ReadOnlyMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = (
        "user",
        "category",
        "match_link",
        "result",
        "rating_before",
        "rating_after",
        "match_finished_at",
        "counted_in_stats",
    )
    list_filter = ("category", "result", "counted_in_stats")
    search_fields = ("user__username", "match_id")
    date_hierarchy = "match_finished_at"
    actions = [recompute_all]

    class Media:
        css = {"all": ("accounts/admin.css",)}

    readonly_fields = ("match_link",)

    @admin.display(description="Match", ordering="match_id")
    def match_link(self, obj: RatingChange) -> str:
        """The match's admin page (no foreign key: accounts never imports games)."""
        try:
            url = reverse("admin:games_match_change", args=[obj.match_id])
        except NoReverseMatch:  # the games app is not installed
            return str(obj.match_id)
        return format_html('<a href="{}">{}</a>', url, str(obj.match_id)[:8])


@admin.register(PlayerStats)
class PlayerStatsAdmin(ReadOnlyMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = (
        "user",
        "category",
        "games",
        "wins",
        "draws",
        "losses",
        "deals_won",
        "deals_played",
        "points_per_deal",
        "updated_at",
    )
    list_filter = ("category",)
    search_fields = ("user__username",)
    actions = [recompute_all]

    class Media:
        css = {"all": ("accounts/admin.css",)}
