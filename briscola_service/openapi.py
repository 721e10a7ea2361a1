"""OpenAPI schema generation (drf-spectacular)."""

from typing import Any

from drf_spectacular import openapi


class AutoSchema(openapi.AutoSchema):
    """Names nested serializers after their view: `RegisterApi.OutputSerializer` becomes the
    component `RegisterApiOutput`, so one-view-per-operation classes with nested
    InputSerializer/OutputSerializer do not collide in the schema.
    """

    def get_serializer_name(self, serializer: Any, direction: Any) -> str:
        qualname: str = type(serializer).__qualname__
        if "." in qualname and "<locals>" not in qualname:
            return qualname.replace(".", "")
        return str(super().get_serializer_name(serializer, direction))
