"""Matches, seats, deals and the append-only move log.

A deal's truth is its seed plus its moves; hands, tricks, points and whose turn it is
are derived by replaying them through :mod:`games.rules` (see ``selectors``). The few
result columns on Deal and Match are written once, when a deal or match ends, so that
lists and filters need no replay.
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from django.conf import settings
from django.db import models
from django.db.models import Q

from games.rules import FORMATS


class MatchStatus(models.TextChoices):
    WAITING = "waiting", "Waiting for players"
    ACTIVE = "active", "Active"
    FINISHED = "finished", "Finished"
    ABORTED = "aborted", "Aborted"


class MatchFormat(models.TextChoices):
    SINGLE = "single", "Single deal"
    FIRST_TO_2 = "first_to_2", "First to 2 deals"
    FIRST_TO_3 = "first_to_3", "First to 3 deals"


assert set(MatchFormat.values) == set(FORMATS)


class EndReason(models.TextChoices):
    PLAYED = "played", "Played out"
    RESIGNED = "resigned", "Resignation"
    ABORTED = "aborted", "Aborted"
    TIMEOUT = "timeout", "A seat ran out of time"
    ABANDONED = "abandoned", "Nobody moved for too long"
    ABORT_WINDOW = "abort_window", "A person never played a first card"
    DECLINED = "declined", "An invitation was declined"
    EXPIRED = "expired", "Nobody joined in time"


class OnTimeout(models.TextChoices):
    BOT = "bot", "A bot plays for the absent seat"
    FORFEIT = "forfeit", "The absent side loses"


class MatchEventKind(models.TextChoices):
    """Every kind of ``MatchEvent`` (games.clocks.services.event_add refuses any other): the
    event log (``GET /matches/{id}/events``) answers each as an event of that ``type``, and
    the schema's ``Event`` lists each (games.matches.serializers)."""

    SEAT_TIMED_OUT = "seat_timed_out", "A seat's deadline passed"
    SEAT_TAKEN_BY_BOT = "seat_taken_by_bot", "The timeout bot holds a seat"
    SEAT_RETURNED = "seat_returned", "A person plays their seat again"
    INVITATION_DECLINED = "invitation_declined", "An invitation was declined"
    SEAT_LEFT = "seat_left", "A person left a waiting match"
    MATCH_EXPIRED = "match_expired", "Nobody joined in time"
    REMATCH_PROPOSED = "rematch_proposed", "A rematch was proposed"


class Match(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    players = models.PositiveSmallIntegerField(choices=[(2, "2 players"), (4, "4 players")])
    format = models.CharField(max_length=16, choices=MatchFormat.choices)
    partners_last_hand = models.BooleanField(
        default=True, help_text="4 players: partners see each other's hand once the stock is empty."
    )
    status = models.CharField(
        max_length=16, choices=MatchStatus.choices, default=MatchStatus.WAITING, db_index=True
    )
    deals_won_team0 = models.PositiveSmallIntegerField(default=0)
    deals_won_team1 = models.PositiveSmallIntegerField(default=0)
    winner_team = models.PositiveSmallIntegerField(null=True, blank=True)
    end_reason = models.CharField(max_length=16, choices=EndReason.choices, blank=True)
    public = models.BooleanField(default=False)
    rated = models.BooleanField(default=False)
    rating_weight = models.FloatField(
        default=1.0,
        help_text=(
            "How much a rated match moves ratings (1: fully), set when it finishes: less "
            "when the same two people had rated results shortly before (games.rated_games)."
        ),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="matches_created"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # -- time limits (games.clocks): settings chosen at creation ---------------------------
    per_move_seconds = models.PositiveIntegerField(
        null=True, blank=True, help_text="Time a person has per card; empty: untimed."
    )
    on_timeout = models.CharField(
        max_length=8, choices=OnTimeout.choices, default=OnTimeout.FORFEIT
    )
    timeout_bot_level = models.CharField(max_length=16, default="greedy")
    rematch_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="rematches"
    )
    # -- who must act by when: written under the match's lock by every move ------------------
    to_move_deal = models.BigIntegerField(null=True, blank=True)
    to_move_ply = models.PositiveSmallIntegerField(null=True, blank=True)
    to_move_seat = models.PositiveSmallIntegerField(null=True, blank=True)
    deadline = models.DateTimeField(
        null=True, blank=True, help_text="The person to move must play by then (database clock)."
    )
    bot_to_move_since = models.DateTimeField(
        null=True, blank=True, help_text="A bot (or the bot holding a seat) is to move since."
    )
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="A waiting match is called off then."
    )

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "matches"
        indexes = [
            models.Index(
                fields=["deadline"], name="match_deadline", condition=Q(deadline__isnull=False)
            ),
            models.Index(
                fields=["bot_to_move_since"],
                name="match_bot_to_move",
                condition=Q(bot_to_move_since__isnull=False),
            ),
            models.Index(
                fields=["expires_at"],
                name="match_waiting_expiry",
                condition=Q(status="waiting", expires_at__isnull=False),
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(players__in=[2, 4]), name="match_players_2_or_4"),
            models.CheckConstraint(
                condition=Q(winner_team__isnull=True) | Q(winner_team__in=[0, 1]),
                name="match_winner_is_a_team",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_format_display()} ({self.players}p) {str(self.id)[:8]}"

    @property
    def deals_won(self) -> tuple[int, int]:
        return (self.deals_won_team0, self.deals_won_team1)


class Seat(models.Model):
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats")
    number = models.PositiveSmallIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="seats",
        help_text="Empty while the seat is open.",
    )
    joined_at = models.DateTimeField(
        null=True, blank=True, help_text="Empty for an open seat or an unanswered invitation."
    )
    away = models.BooleanField(default=False, help_text="The bot played this seat's last turn.")
    timeouts_in_row = models.PositiveSmallIntegerField(default=0)
    bot_holds = models.BooleanField(
        default=False, help_text="The bot plays this seat until its person returns."
    )

    class Meta:
        ordering = ["match", "number"]
        constraints = [
            models.UniqueConstraint(fields=["match", "number"], name="seat_unique_number"),
            models.UniqueConstraint(fields=["match", "user"], name="seat_one_per_user"),
        ]

    def __str__(self) -> str:
        return f"seat {self.number}: {self.user or 'open'}"

    @property
    def team(self) -> int:
        return self.number & 1


class DealStatus(models.TextChoices):
    ACTIVE = "active", "Being played"
    FINISHED = "finished", "Finished"
    ABANDONED = "abandoned", "Abandoned (match ended during the deal)"


class Deal(models.Model):
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="deals")
    number = models.PositiveSmallIntegerField(help_text="1 for the match's first deal.")
    dealer = models.PositiveSmallIntegerField()
    seed = models.CharField(max_length=64, help_text="Secret until the deal ends.")
    commitment = models.CharField(max_length=64, help_text="SHA-256 of the seed, public.")
    status = models.CharField(
        max_length=16, choices=DealStatus.choices, default=DealStatus.ACTIVE, db_index=True
    )
    points_team0 = models.PositiveSmallIntegerField(null=True, blank=True)
    points_team1 = models.PositiveSmallIntegerField(null=True, blank=True)
    winner_team = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Empty while played, for a 60-60 draw or if abandoned."
    )
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["match", "number"]
        constraints = [
            models.UniqueConstraint(fields=["match", "number"], name="deal_unique_number"),
        ]

    def __str__(self) -> str:
        return f"deal {self.number} of {self.match}"

    @property
    def is_over(self) -> bool:
        return self.status != DealStatus.ACTIVE


class AppendOnlyError(Exception):
    code = "append_only"
    status = 500


class MoveQuerySet(models.QuerySet["Move"]):
    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError("moves are append-only: they are never updated")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("moves are append-only: they are never deleted")


class Move(models.Model):
    """One card played. Only ever inserted (enforced here and by database triggers)."""

    deal = models.ForeignKey(Deal, on_delete=models.PROTECT, related_name="moves")
    ply = models.PositiveSmallIntegerField(help_text="0 for the deal's first card.")
    seat = models.PositiveSmallIntegerField()
    card = models.CharField(max_length=2)
    created_at = models.DateTimeField(auto_now_add=True)

    objects: ClassVar[MoveQuerySet] = MoveQuerySet.as_manager()  # type: ignore[assignment]

    class Meta:
        ordering = ["deal", "ply"]
        constraints = [
            models.UniqueConstraint(fields=["deal", "ply"], name="move_unique_ply"),
            models.CheckConstraint(condition=Q(ply__lt=40), name="move_ply_below_40"),
        ]

    def __str__(self) -> str:
        return f"{self.ply}. seat {self.seat}: {self.card}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError("moves are append-only: a saved move cannot change")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("moves are append-only: they are never deleted")


class MatchEvent(models.Model):
    """What happened to a match besides its cards (a timeout, a seat taken over or taken
    back, an invitation declined, a seat left, an expiry, a rematch): appended, never
    changed. ``deal`` and ``ply`` place it among the deal's events (before the card at
    ``ply``); without a deal it happened before the first deal or after the match."""

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="clock_events")
    kind = models.CharField(max_length=32)
    deal = models.BigIntegerField(null=True, blank=True)
    ply = models.PositiveSmallIntegerField(null=True, blank=True)
    after_end = models.BooleanField(default=False)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["match", "id"]
        indexes = [models.Index(fields=["match", "id"], name="match_event_order")]

    def __str__(self) -> str:
        return f"{self.kind} in {self.match_id}"
