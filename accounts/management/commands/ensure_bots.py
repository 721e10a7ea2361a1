"""Create the bot accounts named in settings.BOT_LEVELS (idempotent)."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from accounts.services import bot_account_ensure


class Command(BaseCommand):
    help = "Create the bot accounts for settings.BOT_LEVELS if they are missing."

    def handle(self, *args: Any, **options: Any) -> None:
        for level in settings.BOT_LEVELS:
            user = bot_account_ensure(level=level)
            self.stdout.write(f"bot account {user.username} (level {user.bot_level})")
