from django.apps import AppConfig


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"

    def ready(self) -> None:
        # The tasks are registered in every process, web ones included: services queue
        # them by name (briscola_service.queueing), which the registry must know.
        from games import tasks  # noqa: F401
        from games.live import signals  # noqa: F401 - connects the receivers
