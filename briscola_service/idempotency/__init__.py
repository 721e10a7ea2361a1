"""Idempotency keys: a retried write (same ``Idempotency-Key``, same body) is answered
from the record of the first one instead of being done twice."""
