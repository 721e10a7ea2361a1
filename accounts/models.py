"""Users: people and bot accounts share one table, so bots play through the same seats."""

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models import Q


class User(AbstractUser):
    is_bot = models.BooleanField(default=False)
    # The bot's strength, e.g. "random", "greedy", "expert"; empty for people.
    bot_level = models.CharField(max_length=20, blank=True, default="")

    class Meta(AbstractUser.Meta):
        constraints = [
            models.CheckConstraint(
                condition=(Q(is_bot=True) & ~Q(bot_level="")) | (Q(is_bot=False) & Q(bot_level="")),
                name="accounts_user_bot_has_level_person_has_none",
            ),
        ]

    def __str__(self) -> str:
        return self.username
