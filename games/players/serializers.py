"""Input and output serializers of the players and leaderboard API."""

from __future__ import annotations

from rest_framework import serializers

from accounts.ratings.math import CATEGORIES
from briscola_service.serializers import QueryIntegerField
from games.matches.serializers import MatchSummaryOutput, RatingChangeOutput, StrictSerializer


class CategoryFilter(StrictSerializer):
    category = serializers.CharField(required=False)
    page = QueryIntegerField(min_value=1, required=False)
    page_size = QueryIntegerField(min_value=1, required=False)  # above 100: 100


class LeaderboardFilter(CategoryFilter):
    bots = serializers.ChoiceField(choices=["include", "exclude", "only"], default="include")


class PageFilter(StrictSerializer):
    page = QueryIntegerField(min_value=1, required=False)
    page_size = QueryIntegerField(min_value=1, required=False)  # above 100: 100


class RatingOutput(serializers.Serializer):  # type: ignore[type-arg]
    rating = serializers.IntegerField(help_text="1500 for a newcomer (Elo-like scale).")
    deviation = serializers.IntegerField(help_text="Uncertainty on the same scale.")
    provisional = serializers.BooleanField()
    games = serializers.IntegerField()
    mu = serializers.FloatField(help_text="OpenSkill mean.")
    sigma = serializers.FloatField(help_text="OpenSkill uncertainty.")


class StatsOutput(serializers.Serializer):  # type: ignore[type-arg]
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    draws = serializers.IntegerField()
    losses = serializers.IntegerField()
    deals_played = serializers.IntegerField()
    deals_won = serializers.IntegerField()
    points_per_deal = serializers.FloatField(
        allow_null=True, help_text="Card points your team took per finished deal."
    )


class RatingsByCategoryOutput(serializers.Serializer):  # type: ignore[type-arg]
    def get_fields(self) -> dict[str, serializers.Field]:  # type: ignore[type-arg]
        return {c: RatingOutput() for c in CATEGORIES}


class StatsByCategoryOutput(serializers.Serializer):  # type: ignore[type-arg]
    def get_fields(self) -> dict[str, serializers.Field]:  # type: ignore[type-arg]
        return {c: StatsOutput() for c in CATEGORIES}


class PlayerOutput(serializers.Serializer):  # type: ignore[type-arg]
    username = serializers.CharField()
    is_bot = serializers.BooleanField()
    bot_level = serializers.CharField(allow_null=True)
    date_joined = serializers.DateTimeField()
    ratings = RatingsByCategoryOutput()
    stats = StatsByCategoryOutput(
        help_text="Rated matches only; updated by a periodic job (within about a minute)."
    )


class PlayerMatchOutput(MatchSummaryOutput):
    rating_change = RatingChangeOutput(
        allow_null=True, help_text="The player's rating change in this match, if rated."
    )


class LeaderboardEntryOutput(serializers.Serializer):  # type: ignore[type-arg]
    rank = serializers.IntegerField()
    username = serializers.CharField()
    is_bot = serializers.BooleanField()
    rating = serializers.IntegerField()
    deviation = serializers.IntegerField()
    games = serializers.IntegerField()
