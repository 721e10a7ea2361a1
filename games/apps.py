from django.apps import AppConfig


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"

    def ready(self) -> None:
        # Registers the tasks in every process, not only in Celery workers (whose loader
        # imports them): services send tasks by name (briscola_service.queueing), and a web
        # process running them in-process (no REDIS_URL, as with `make run`) must know them.
        from games import tasks  # noqa: F401
