"""The one pagination class for list endpoints."""

from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination


class StandardPagination(PageNumberPagination):
    """Pages of 20 by default; ``page_size`` outside 1..100 is 400 ``invalid_input``
    rather than silently changed, so a client learns the limit."""

    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100

    def get_page_size(self, request: Any) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            size = int(raw)
        except ValueError:
            size = 0
        if not 1 <= size <= self.max_page_size:
            raise ValidationError(
                {self.page_size_query_param: [f"A whole number from 1 to {self.max_page_size}."]}
            )
        return size

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        """DRF's parameters, with the bounds the view enforces (a page outside is 404)."""
        parameters: list[dict[str, Any]] = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_query_param:
                parameter["schema"]["minimum"] = 1
            elif parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
                parameter["description"] = f"Results per page, 1 to {self.max_page_size}."
        return parameters
