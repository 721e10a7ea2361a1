"""The one pagination class for list endpoints."""

from typing import Any

from rest_framework.exceptions import ErrorDetail, ValidationError
from rest_framework.pagination import PageNumberPagination


class StandardPagination(PageNumberPagination):
    """Pages of 20 by default; a ``page_size`` above 100 is served as 100 (the next link
    says so), one below 1 or not a whole number is 400 ``invalid_input``."""

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
        if size < 1:
            raise ValidationError(
                {
                    self.page_size_query_param: [
                        ErrorDetail(
                            f"A whole number from 1 (at most {self.max_page_size} are served).",
                            code="invalid",
                        )
                    ]
                }
            )
        return min(size, self.max_page_size)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        """DRF's parameters, with the bounds the view enforces (a page outside is 404)."""
        parameters: list[dict[str, Any]] = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_query_param:
                parameter["schema"]["minimum"] = 1
            elif parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1)
                parameter["description"] = (
                    f"Results per page, at least 1; above {self.max_page_size}, "
                    f"{self.max_page_size} are served."
                )
        return parameters
