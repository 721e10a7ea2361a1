"""Users: people and bot accounts share one table, so bots play through the same seats."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower

from accounts.ratings.math import display_rating, is_provisional
from accounts.usernames import normalize, username_skeleton


class User(AbstractUser):
    # One of the service's own bots (played by its workers, never signs in).
    is_bot = models.BooleanField(default=False)
    # The bot's strength, e.g. "random", "greedy", "expert"; empty for people.
    bot_level = models.CharField(max_length=20, blank=True, default="")
    # A bot that a third party runs through the API with its own tokens: shown as a bot
    # everywhere (``plays_as_bot``), but it signs in and moves like a person.
    third_party_bot = models.BooleanField(default=False)
    # What the name looks like (accounts.usernames.username_skeleton): unique, so that no
    # name can pose as another with look-alike characters, even under concurrent
    # registrations. Empty (NULL) only for the later of two accounts that existed before
    # the rule and share a skeleton (migration 0003).
    username_key = models.CharField(
        max_length=300, unique=True, null=True, blank=True, editable=False
    )

    class Meta(AbstractUser.Meta):
        constraints = [
            models.CheckConstraint(
                condition=(Q(is_bot=True) & ~Q(bot_level="")) | (Q(is_bot=False) & Q(bot_level="")),
                name="accounts_user_bot_has_level_person_has_none",
            ),
            models.CheckConstraint(
                condition=Q(third_party_bot=False) | Q(is_bot=False),
                name="accounts_user_service_bot_is_not_third_party",
            ),
            # One account per name in any letter case, enforced by the database.
            models.UniqueConstraint(Lower("username"), name="accounts_user_username_lower_uniq"),
        ]

    def __str__(self) -> str:
        return self.username

    @classmethod
    def from_db(cls, db: Any, field_names: Any, values: Any) -> User:
        user = super().from_db(db, field_names, values)
        user._loaded_username = user.__dict__.get("username")
        return user

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Names are stored NFKC-normalised; the skeleton follows the name (computed when
        the account is created or renamed, so an account kept without one by migration
        0003 keeps working)."""
        self.username = normalize(self.username)
        renamed = self._state.adding or getattr(self, "_loaded_username", None) != self.username
        if renamed:
            self.username_key = username_skeleton(self.username)
            update_fields = kwargs.get("update_fields")
            if update_fields is not None and "username" in update_fields:
                kwargs["update_fields"] = {*update_fields, "username_key"}
        super().save(*args, **kwargs)
        self._loaded_username = self.username

    @property
    def plays_as_bot(self) -> bool:
        """A bot, the service's own or a third party's: what every public view shows."""
        return self.is_bot or self.third_party_bot


class TokenScope(models.TextChoices):
    READ = "read", "Read: every GET"
    PLAY = "play", "Play: writes too (create, join, move, resign...)"


class AccessToken(models.Model):
    """A personal access token: one of several per account, each named, with scopes and
    the time it was last used; revoked by deleting it. Only a SHA-256 of the key is kept:
    the key is shown once, when the token is created."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="access_tokens")
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12, help_text="The key's first characters, to tell.")
    scopes = models.JSONField(default=list, help_text='A list of "read" and "play".')
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["user", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.user} {self.name} ({' '.join(self.scopes)})"


# --- Ratings -------------------------------------------------------------------------------
# Matches live in the games app, which accounts never imports: a rating change names its
# match by id only (no foreign key), and the services in games feed accounts.ratings.math.


class RatingCategory(models.TextChoices):
    ONE_V_ONE = "1v1", "1v1 (2 players)"
    TWO_V_TWO = "2v2", "2v2 (4 players, partnerships)"


class Rating(models.Model):
    """A player's current OpenSkill rating in one category (see accounts.ratings.math)."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="ratings")
    category = models.CharField(max_length=8, choices=RatingCategory.choices)
    mu = models.FloatField()
    sigma = models.FloatField()
    games = models.PositiveIntegerField(default=0)
    # The last match applied, in finish order (finished_at, then match id).
    last_match_id = models.UUIDField(null=True, blank=True)
    last_match_finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["category", "-mu"]
        constraints = [
            models.UniqueConstraint(fields=["user", "category"], name="rating_one_per_category"),
        ]
        indexes = [models.Index(fields=["category", "-mu"], name="rating_leaderboard")]

    def __str__(self) -> str:
        return f"{self.user} {self.category}: {self.display}"

    @property
    def display(self) -> int:
        return display_rating(self.mu)

    @property
    def provisional(self) -> bool:
        return is_provisional(self.sigma)


class RatingChange(models.Model):
    """One player's rating change from one rated match: written exactly once.

    UNIQUE (user, match_id) is the last guard: a task run twice, two tasks at once or a
    worker that died half-way can never record a match twice for a player.
    """

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="rating_changes")
    category = models.CharField(max_length=8, choices=RatingCategory.choices)
    match_id = models.UUIDField(db_index=True, help_text="games.Match id (no foreign key).")
    match_finished_at = models.DateTimeField()
    result = models.CharField(
        max_length=8, choices=[("win", "Win"), ("draw", "Draw"), ("loss", "Loss")]
    )
    mu_before = models.FloatField()
    sigma_before = models.FloatField()
    mu_after = models.FloatField()
    sigma_after = models.FloatField()
    rating_before = models.IntegerField(help_text="Display rating before the match.")
    rating_after = models.IntegerField(help_text="Display rating after the match.")
    counted_in_stats = models.BooleanField(
        default=False, help_text="Added to PlayerStats by the periodic aggregation."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user", "category", "match_finished_at", "match_id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "match_id"], name="rating_change_once"),
        ]
        indexes = [
            models.Index(
                fields=["user", "category", "match_finished_at"], name="rating_change_history"
            ),
            models.Index(
                fields=["id"],
                condition=Q(counted_in_stats=False),
                name="rating_change_not_counted",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.category} {self.rating_before}->{self.rating_after}"

    @property
    def rating_diff(self) -> int:
        return self.rating_after - self.rating_before


class PlayerStats(models.Model):
    """Per-category statistics over the rated matches applied (aggregated by a beat job)."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="stats")
    category = models.CharField(max_length=8, choices=RatingCategory.choices)
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    deals_played = models.PositiveIntegerField(default=0)
    deals_won = models.PositiveIntegerField(default=0)
    points = models.PositiveIntegerField(default=0, help_text="Card points of finished deals.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["user", "category"]
        verbose_name_plural = "player stats"
        constraints = [
            models.UniqueConstraint(fields=["user", "category"], name="player_stats_once"),
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.category}: {self.games} games"

    @property
    def points_per_deal(self) -> float | None:
        return round(self.points / self.deals_played, 2) if self.deals_played else None
