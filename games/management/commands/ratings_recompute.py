"""Rebuild every rating, rating change and statistic from the match history."""

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser, OutputWrapper

from games.rated_games import ProgressBar, ratings_recompute


class _Raw:
    """The command's stderr without the newline OutputWrapper adds to each write."""

    def __init__(self, wrapper: OutputWrapper) -> None:
        self.wrapper = wrapper

    def write(self, text: str) -> None:
        self.wrapper.write(text, ending="")

    def flush(self) -> None:
        self.wrapper.flush()


class Command(BaseCommand):
    help = (
        "Rebuild all ratings, rating changes and player statistics from the finished rated "
        "matches, in the order they finished (a progress bar on stderr). Rating writes wait "
        "until it is done; readers see the old numbers until then."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-progress", action="store_true", help="No progress bar.")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.perf_counter()

        def progress(total: int) -> Any:
            if options["no_progress"]:
                return None
            return ProgressBar(total, stream=_Raw(self.stderr))

        summary = ratings_recompute(progress=progress)
        self.stdout.write(
            f"recomputed {summary.games} matches: {summary.ratings} ratings, "
            f"{summary.changes} rating changes in {time.perf_counter() - started:.1f}s"
        )
