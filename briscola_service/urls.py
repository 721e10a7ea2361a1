"""URL configuration. The games API is mounted only once the games app exists."""

import importlib.util

from django.conf import settings
from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from briscola_service import exceptions, health, metrics


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


# No navigation sidebar beside the admin's lists (the index page links every model): at
# 1280 px it took 300 px from them, and their last columns were cut off (the move list's
# "Created at", the deal list's points, the rating changes' "Rating after", the match
# list's clock).
admin.site.enable_nav_sidebar = False

urlpatterns: list[URLPattern | URLResolver] = [
    # People land on the game (the API's docs are linked from the lobby).
    path("", RedirectView.as_view(pattern_name="play-lobby", permanent=False)),
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("statusz", health.statusz, name="statusz"),
    path("metrics", metrics.metrics_view, name="metrics"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves its start-up script as a file: the pages allow no inline script.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="schema", template_name="briscola_service/api_docs.html"
        ),
        name="swagger-ui",
    ),
    path("api/v1/auth/", include("accounts.urls")),
    path("api-auth/", include("rest_framework.urls")),
]

if settings.GAMES_APP_PRESENT and _module_exists("games.urls"):
    urlpatterns.append(path("api/v1/", include("games.urls")))
if settings.GAMES_APP_PRESENT and _module_exists("games.replays.pages"):
    urlpatterns.append(path("replay/", include("games.replays.pages")))
if settings.GAMES_APP_PRESENT and _module_exists("games.play.pages"):
    urlpatterns.append(path("play/", include("games.play.pages")))
# The language switch of the pages (POST language=en|it; a cookie keeps the choice).
urlpatterns.append(path("i18n/", include("django.conf.urls.i18n")))

# Last: any other /api/ URL answers a JSON 404, in DEBUG too.
urlpatterns.append(re_path(r"^api/(?P<path>.*)$", exceptions.api_not_found))

handler404 = "briscola_service.exceptions.page_not_found"
handler500 = "briscola_service.exceptions.server_error"
