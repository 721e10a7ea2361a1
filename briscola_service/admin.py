"""What every app's admin shares."""

from __future__ import annotations

from typing import Any

from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.translation import gettext


class SecretFieldsMixin:
    """Fields whose values the admin never filters by: Django lets the change list filter
    by any field of the model in the URL (``?seed__startswith=4``), and by the primary key
    of a related model (``?auth_token__key__startswith=6`` on users: a token's key is its
    primary key), which would let anyone who sees the list find a secret a character at a
    time, from whether the list is empty (a live deal's seed, to a staff member who plays
    in its match; any account's API token). A filter whose path goes through one of
    ``secret_fields`` anywhere is refused (400)."""

    secret_fields: tuple[str, ...] = ()

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        if set(lookup.split(LOOKUP_SEP)) & set(self.secret_fields):
            return False
        return super().lookup_allowed(lookup, value, request)  # type: ignore[misc]


class ReadOnlyMixin:
    """Visible, never added, changed or deleted by hand: games and ratings change only
    through their services."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    # Django's admin refuses the add and delete pages by raising PermissionDenied, which
    # showed the site's 403 page ("Not yours to see. This belongs to a private match"):
    # the admin's own page says why instead (still 403).

    def _refused(self, request: HttpRequest) -> HttpResponse:
        opts = self.model._meta  # type: ignore[attr-defined]
        context = {
            **self.admin_site.each_context(request),  # type: ignore[attr-defined]
            "opts": opts,
            "title": gettext("Read-only"),
        }
        return TemplateResponse(request, "admin/read_only_refused.html", context, status=403)

    def add_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return self._refused(request)

    def delete_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return self._refused(request)
