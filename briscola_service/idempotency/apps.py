from django.apps import AppConfig


class IdempotencyConfig(AppConfig):
    name = "briscola_service.idempotency"
    label = "idempotency"
    default_auto_field = "django.db.models.BigAutoField"
