"""What the games app's APIs share: the errors a read may answer, query parameters
without DRF's format switch, reads of one moment, and the base view of reads open to
anonymous visitors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from briscola_service.exceptions import ErrorSerializer
from games.errors import DealNotFoundError, MatchPrivateError
from games.matches.selectors import rows_of_one_moment

# What a read may answer.
READ_ERRORS = {code: ErrorSerializer for code in (400, 401, 403, 404)}

# A deal's id in a URL. The routes take any text there (games/urls.py), so that an id that
# cannot be one (``abc``, ``-1``) is ``deal_not_found`` like one that names no deal
# (games.matches.selectors.deal_get), not the generic ``not_found`` of an unknown URL.
DEAL_ID = OpenApiParameter(
    "deal_id",
    int,
    OpenApiParameter.PATH,
    description=(
        "The deal's id. A deal the viewer may not see (a private match's) answers exactly as "
        "one that does not exist: 404 `deal_not_found`; to an anonymous visitor, 401 "
        "`not_authenticated` for both."
    ),
)


def query_params(request: Request, *, keep_format: bool = False) -> dict[str, Any]:
    """The query parameters, without DRF's ``?format=`` renderer switch (not a filter)
    unless the view's own ``format`` parameter is meant (``keep_format``)."""
    switch = api_settings.URL_FORMAT_OVERRIDE
    return {k: v for k, v in request.query_params.items() if keep_format or k != switch}


Handler = TypeVar("Handler", bound=Callable[..., Any])


def reads_of_one_moment(handler: Handler) -> Handler:
    """A read's handler whose queries all see the rows as they were at one moment
    (:func:`games.matches.selectors.rows_of_one_moment`). A read takes several statements
    (a match's row, seats, deals, moves; a page and its count; a player's ratings and
    stats): out of a transaction a move or a join committed between two of them mixed two
    states in one answer, such as events numbered from one state and told from another,
    or a replay of a deal's row and of moves of later. Every GET of the games API is
    one, but the streams (each of whose reads is one moment already) and a match's
    detail (whose version check is not, on purpose: games.matches.apis.MatchDetailApi)."""
    wrapped: Handler = rows_of_one_moment()(handler)
    return wrapped


# AllowAny: the selectors decide; an anonymous visitor denied for privacy gets 401. (A
# comment, not a docstring: the schema would show a view's docstring to the public.)
class OpenToPublicDealsApi(APIView):
    permission_classes = [AllowAny]

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, MatchPrivateError) and not self.request.user.is_authenticated:
            exc = NotAuthenticated()
        return super().handle_exception(exc)


# A deal's id is a sequential number: whoever may not see a deal must not learn that it
# exists, nor that it is private. So a deal the viewer may not see answers as a deal that
# does not exist: 404 ``deal_not_found`` to a signed-in viewer; to an anonymous visitor,
# 401 ``not_authenticated`` for both (signing in may open it; an absent id is no different).
# Matches are addressed by unguessable UUIDs: their endpoints keep ``match_private``.
class DealAddressedApi(OpenToPublicDealsApi):
    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, (MatchPrivateError, DealNotFoundError)):
            if not self.request.user.is_authenticated:
                exc = NotAuthenticated()
            else:
                exc = DealNotFoundError()
        return super().handle_exception(exc)
