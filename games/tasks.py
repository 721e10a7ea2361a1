"""Celery tasks: thin, take ids, call services. Each is safe to run twice or to lose."""

from __future__ import annotations

from celery import Task, shared_task

from briscola_service import metrics, queueing
from games import rated_games
from games.clocks import services as clocks
from games.matches import services


@shared_task(name="games.tasks.bot_play", bind=True, acks_late=True, ignore_result=True)
def bot_play(
    self: Task, deal_id: int, ply: int, account: int | None = None, fair: bool = False
) -> bool:
    """Play a bot's card if the deal still waits for it at ``ply`` (else do nothing); or,
    sent ``fair``, the bot reply next in turn between accounts (services.bot_reply_run).
    ``account`` is the account the reply is charged to (for the logs; the fair queue has it).

    The bot thinks for at most ``settings.BOT_THINK_MS`` (see services.bot_move_play);
    the task's time limits (CELERY_TASK_SOFT_TIME_LIMIT, CELERY_TASK_TIME_LIMIT) are
    seconds, far above that budget.
    """
    return services.bot_reply_run(
        pool=services.BOT_TASK, deal_id=deal_id, ply=ply, fair=fair, token=self.request.id
    )


@shared_task(name="games.tasks.bot_play_expert", bind=True, acks_late=True, ignore_result=True)
def bot_play_expert(
    self: Task, deal_id: int, ply: int, account: int | None = None, fair: bool = False
) -> bool:
    """The slow levels' replies (``BOT_SLOW_LEVELS``): the same as ``bot_play``, routed to
    the expert queue (``CELERY_TASK_ROUTES``), so their searches never delay the other bots'
    replies, with a fair queue of their own."""
    return services.bot_reply_run(
        pool=services.BOT_TASK_SLOW, deal_id=deal_id, ply=ply, fair=fair, token=self.request.id
    )


@shared_task(name="games.tasks.clock_timeout", acks_late=True, ignore_result=True)
def clock_timeout(match_id: str) -> str | None:
    """Apply the match's deadline if it has passed (database clock); exactly once."""
    return clocks.timeout_enforce(match_id=match_id)


@shared_task(name="games.tasks.clock_deadline", acks_late=True, ignore_result=True)
def clock_deadline(match_id: str, deal_id: int, ply: int, deadline: str) -> str | None:
    """Due at a live deadline: apply exactly that deadline (of that deal, at that ply) if
    it is still pending and has passed by the database's clock; exactly once (else
    nothing; come early, it sends itself again for the rest)."""
    return clocks.deadline_task_enforce(
        match_id=match_id, deal_id=deal_id, ply=ply, deadline=deadline
    )


@shared_task(name="games.tasks.clocks_sweep", ignore_result=True)
def clocks_sweep() -> int:
    """Periodic: apply passed deadlines, expire waiting matches (indexed, bounded)."""
    return clocks.deadlines_sweep()


@shared_task(name="games.tasks.sweep_pending_bot_moves", ignore_result=True)
def sweep_pending_bot_moves() -> int:
    """Periodic: queue again the bot replies that were never delivered."""
    found = services.bot_moves_sweep()
    metrics.SWEEPS.labels("bot_replies").inc()
    metrics.SWEEP_FOUND.labels("bot_replies").inc(found)
    return found


@shared_task(name="games.tasks.rate_match", acks_late=True, ignore_result=True)
def rate_match(match_id: str) -> int:
    """Record the rating changes of a finished rated match, exactly once (and any earlier
    finished match of its players still waiting for its own)."""
    written = rated_games.match_ratings_apply(match_id=match_id)
    metrics.RATINGS_APPLIED.inc(written)
    if queueing.tasks_run_in_process():
        # No beat without a broker (make run): the statistics follow the rating at once.
        rated_games.player_stats_aggregate()
    return written


@shared_task(name="games.tasks.ratings_sweep", ignore_result=True)
def ratings_sweep() -> list[int]:
    """Periodic: re-queue rated matches never rated; add new results to player statistics."""
    queued, counted = rated_games.ratings_sweep()
    metrics.SWEEPS.labels("ratings").inc()
    metrics.SWEEP_FOUND.labels("ratings").inc(queued)
    return [queued, counted]


@shared_task(name="games.tasks.ratings_recompute", ignore_result=True)
def ratings_recompute() -> int:
    """Rebuild all ratings and statistics from the match history (admin action)."""
    return rated_games.ratings_recompute().games
