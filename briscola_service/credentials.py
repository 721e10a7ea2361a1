"""Settings values that carry a password, such as ``REDIS_URL``.

Celery masks settings by their names (``*PASSWORD*``, ``*SECRET*``, ``*BROKER_URL``...),
not by their values: an outside audit found ``celery -A briscola_service report`` (which
Celery's bug template asks people to paste) printing REDIS_URL's password three times,
as ``REDIS_URL`` and as the caches' ``LOCATION``. A :class:`CredentialedURL` is the URL
itself to whatever connects with it (a ``str``), and shows its password masked wherever it
is shown as a value (``repr``: ``celery report``, ``manage.py diffsettings``, ``pprint``,
a traceback's locals in a DEBUG page)."""

from __future__ import annotations

from urllib.parse import urlsplit

MASK = "********"


def masked(url: str) -> str:
    """``url`` with its password, if any, replaced by :data:`MASK`."""
    try:
        has_password = urlsplit(url).password is not None
    except ValueError:  # not a URL one can read: show nothing of it
        return MASK
    if not has_password:
        return url
    scheme, _, rest = url.partition("://")
    userinfo, _, host = rest.rpartition("@")
    user = userinfo.partition(":")[0]
    return f"{scheme}://{user}:{MASK}@{host}"


class CredentialedURL(str):
    """A URL that may carry a password: itself as a string, masked in its ``repr``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return repr(masked(str(self)))  # str(self): a plain str, whose repr is str's
