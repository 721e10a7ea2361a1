"""The fields and the base serializer every JSON request body of the API is read with.

A JSON body means what its types say: an integer is a JSON integer, a boolean a JSON
boolean, a string a JSON string. DRF's own fields convert (``"1"``, ``1.0`` or ``true``
as 1; ``"yes"`` as true; 12345 as ``"12345"``); these refuse, each with the field error
code ``invalid`` (in ``details``, under the 400 ``invalid_input``). A field it does not
know is ``unknown_field``, so a typo is an error, not a silent default. Query strings
are text by nature: a number there is its plain ASCII digits (:class:`QueryIntegerField`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail


class StrictSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """Rejects fields it does not know, so a typo is an error, not a silent default."""

    # The schema says so too: additionalProperties false (briscola_service.openapi).
    rejects_unknown_fields = True

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {
                        name: [ErrorDetail("Unknown field.", code="unknown_field")]
                        for name in unknown
                    }
                )
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer only: DRF's IntegerField would take "1", 1.0 or true as 1."""

    default_error_messages = {"invalid": "A whole number is required (a JSON integer)."}

    def to_internal_value(self, data: Any) -> int:
        if type(data) is not int:
            self.fail("invalid")
        return int(super().to_internal_value(data))


class QueryIntegerField(serializers.IntegerField):
    """A whole number in a query string: ASCII digits, a ``-`` before them at most. DRF's
    IntegerField took ``0.0``, ``+0``, `` 0`` and other scripts' digits (``٣``) as
    numbers, while ``0x1`` was refused: one spelling of a number, the one a client writes."""

    default_error_messages = {"invalid": "A whole number is required, in digits 0-9 (e.g. 3)."}

    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, str) or not _QUERY_INTEGER.fullmatch(data):
            self.fail("invalid")
        return int(super().to_internal_value(data))


_QUERY_INTEGER = re.compile(r"-?[0-9]+")


class StrictCharField(serializers.CharField):
    """A JSON string only: DRF's CharField would turn the number 5 into "5"."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class StrictBooleanField(serializers.BooleanField):
    """A JSON boolean only: DRF's BooleanField would take "yes", "1" or 1 as true."""

    default_error_messages = {"invalid": "A JSON boolean is required (true or false)."}

    def to_internal_value(self, data: Any) -> bool:
        if type(data) is not bool:
            self.fail("invalid")
        return data


class StrictChoiceField(serializers.ChoiceField):
    """One of the choices, of the choices' own JSON type: for integer choices a JSON
    integer (DRF's ChoiceField would take "2" for 2), for string choices a string."""

    default_error_messages = {
        "invalid": "A JSON {kind} is required.",
        # DRF's says '"3" is not a valid choice.' of the integer 3: the value as it was
        # sent, and what may be sent instead.
        "invalid_choice": "{input} is not one of the choices: {choices}.",
    }

    def to_internal_value(self, data: Any) -> Any:
        if all(type(key) is int for key in self.choices):
            if type(data) is not int:
                self.fail("invalid", kind="integer")
        elif all(isinstance(key, str) for key in self.choices) and not isinstance(data, str):
            self.fail("invalid", kind="string")
        if isinstance(data, int | str) and str(data) not in self.choice_strings_to_values:
            self.fail(
                "invalid_choice",
                input=json.dumps(data, ensure_ascii=False)[:100],
                choices=", ".join(json.dumps(key, ensure_ascii=False) for key in self.choices),
            )
        return super().to_internal_value(data)
