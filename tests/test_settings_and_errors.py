import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from rest_framework.exceptions import Throttled
from rest_framework.test import APIClient

from accounts.models import User
from accounts.services import InvalidCredentialsError, token_obtain
from briscola_service.exceptions import ServiceError, api_exception_handler

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.django_db
def test_schema_is_openapi(api_client: APIClient) -> None:
    response = api_client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "Briscola service API"
    assert "/api/v1/auth/register" in schema["paths"]


@pytest.mark.django_db
def test_docs_page_is_served(api_client: APIClient) -> None:
    assert api_client.get("/api/docs/").status_code == 200


@pytest.mark.django_db
def test_docs_page_loads_its_start_up_script_as_a_file(api_client: APIClient) -> None:
    """No inline script for the Content-Security-Policy to refuse: the page names a script
    URL, which answers JavaScript that starts Swagger UI on the schema."""
    page = api_client.get("/api/docs/").content.decode()
    assert "<style" not in page
    assert "<script>" not in page
    script = api_client.get("/api/docs/", {"script": ""})
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()
    assert "/api/schema/" in script.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/play/signin/", "/api/docs/", "/api/v1/matches", "/healthz"])
def test_every_answer_carries_the_security_policies(api_client: APIClient, path: str) -> None:
    """The same policy on pages, the API and the probes (a JSON answer opened in a browser
    tab is a document too)."""
    answer = api_client.get(path)
    directives = dict(d.strip().split(" ", 1) for d in answer["Content-Security-Policy"].split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    # Nothing of the device either (django-permissions-policy).
    allowed = dict(f.strip().split("=", 1) for f in answer["Permissions-Policy"].split(","))
    assert allowed["camera"] == allowed["geolocation"] == allowed["microphone"] == "()"


@pytest.mark.django_db
def test_answers_are_kept_out_of_shared_caches(user_factory: Any, games: Any) -> None:
    """A match's detail (the viewer's hand in it) is private to its viewer, with its ETag
    still revalidated to a 304; a view's own choice is kept (a stream: no-store)."""
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = games.person_match(alice, bob)
    client = APIClient()
    client.force_login(alice)
    detail = client.get(f"/api/v1/matches/{match.pk}")
    assert detail.json()["current_deal"]["hand"]
    assert set(detail["Cache-Control"].split(", ")) == {"private", "no-cache"}
    again = client.get(f"/api/v1/matches/{match.pk}", HTTP_IF_NONE_MATCH=detail["ETag"])
    assert again.status_code == 304
    for answer in (client.get("/api/v1/auth/me"), client.get("/play/"), client.get("/healthz")):
        assert "private" in answer["Cache-Control"], answer
    stream = client.get(f"/api/v1/matches/{match.pk}/stream", {"after": 0})
    assert stream.status_code == 200, stream
    assert stream["Cache-Control"] == "no-cache, no-store"
    stream.close()


@pytest.mark.django_db
def test_unknown_api_url_is_json_404(api_client: APIClient) -> None:
    response = api_client.get("/api/v1/nope")
    assert response.status_code == 404
    assert response.json() == {"code": "not_found", "message": "No such resource.", "details": {}}


@pytest.mark.django_db
def test_unknown_api_url_is_json_404_in_debug_too(api_client: APIClient, settings: Any) -> None:
    settings.DEBUG = True
    response = api_client.get("/api/v1/nope")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


@pytest.mark.django_db
def test_api_url_without_its_slash_redirects(api_client: APIClient) -> None:
    response = api_client.get("/api/docs")
    assert response.status_code == 301
    assert response["Location"].endswith("/api/docs/")


@pytest.mark.django_db
def test_ensure_bots_is_idempotent() -> None:
    call_command("ensure_bots")
    call_command("ensure_bots")
    bots = User.objects.filter(is_bot=True).order_by("username")
    assert [(b.username, b.bot_level) for b in bots] == sorted(
        (f"bot-{level}", level) for level in settings.BOT_LEVELS
    )
    for bot in bots:
        assert not bot.has_usable_password()
    with pytest.raises(InvalidCredentialsError):
        token_obtain(username="bot-random", password="")


class _DuckError(Exception):
    code = "seat_taken"
    status = 409

    def __init__(self) -> None:
        super().__init__("That seat is taken.")
        self.details = {"seat": 1}


class _ConflictError(ServiceError):
    code = "stale_position"
    status = 409
    message = "The deal has moved on."


def test_handler_renders_service_errors() -> None:
    response = api_exception_handler(_ConflictError(details={"expected": 3}), {})
    assert response is not None
    assert response.status_code == 409
    assert response.data == {
        "code": "stale_position",
        "message": "The deal has moved on.",
        "details": {"expected": 3},
    }


def test_handler_renders_duck_typed_errors() -> None:
    response = api_exception_handler(_DuckError(), {})
    assert response is not None
    assert response.status_code == 409
    assert response.data == {
        "code": "seat_taken",
        "message": "That seat is taken.",
        "details": {"seat": 1},
    }


def test_handler_renders_throttling_with_retry_after() -> None:
    response = api_exception_handler(Throttled(wait=2.5), {})
    assert response is not None
    assert response.status_code == 429
    assert response.data["code"] == "throttled"
    assert response.data["details"] == {"retry_after": 3}
    assert response["Retry-After"] == "3"


def test_handler_leaves_unknown_exceptions_to_django() -> None:
    assert api_exception_handler(ValueError("boom"), {}) is None


@pytest.mark.parametrize("secret_key", [None, "", " \t "])
def test_secret_key_is_required_without_debug(secret_key: str | None) -> None:
    """Blank is not set: a SECRET_KEY of spaces ran the server with that key, as easy to
    guess as none (anyone could forge a session cookie)."""
    env: dict[str, Any] = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    if secret_key is not None:
        env["SECRET_KEY"] = secret_key
    env["DEBUG"] = "false"
    result = subprocess.run(
        [sys.executable, "-c", "import briscola_service.settings"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_the_embedded_sqlite_waits_for_its_lock_and_reads_beside_writes(tmp_path: Path) -> None:
    """make run's SQLite file is shared by the web workers, the in-process tasks and the
    streams' threads: a write waits 20 s for the lock (not Python's 5 s, then "database
    is locked": a lost bot reply under load), and WAL lets reads go on during a write."""
    probe = (
        "import django; django.setup(); from django.db import connection; "
        "c = connection.cursor(); "
        "print(c.execute('PRAGMA journal_mode').fetchone()[0], "
        "c.execute('PRAGMA busy_timeout').fetchone()[0])"
    )
    assert _on_embedded_sqlite(tmp_path, probe).split() == ["wal", "20000"]


def _on_embedded_sqlite(tmp_path: Path, code: str) -> str:
    """What ``code`` prints, run by a new process on make run's settings (no
    DATABASE_URL, no REDIS_URL) with its SQLite file in ``tmp_path``."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    env["DJANGO_SETTINGS_MODULE"] = "briscola_service.settings"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


_OVERLAPPING_WRITES = """
import json, threading, time
import django
django.setup()
from django.db import connection, connections, transaction

with connection.cursor() as c:
    c.execute("CREATE TABLE counter (id integer PRIMARY KEY, n integer)")
    c.execute("INSERT INTO counter VALUES (1, 0)")
start = threading.Barrier(6)
errors = []

def add_one():
    try:
        start.wait()
        with transaction.atomic():  # as a move is made: read the state, then write
            with connection.cursor() as c:
                n = c.execute("SELECT n FROM counter WHERE id = 1").fetchone()[0]
                time.sleep(0.05)
                c.execute("UPDATE counter SET n = %s WHERE id = 1", [n + 1])
    except Exception as exc:
        errors.append(str(exc))
    finally:
        connections.close_all()

threads = [threading.Thread(target=add_one) for _ in range(6)]
[t.start() for t in threads]
[t.join() for t in threads]
with connection.cursor() as c:
    n = c.execute("SELECT n FROM counter WHERE id = 1").fetchone()[0]
print(json.dumps({"errors": errors, "n": n}))
"""


def test_the_embedded_sqlite_queues_overlapping_writes_instead_of_failing_them(
    tmp_path: Path,
) -> None:
    """Two requests that each read and then write (a move: read the deal, append the
    move) at the same moment, on make run's SQLite. In SQLite's default (deferred)
    transactions the second to write finds the first's lock and fails at once with
    "database is locked", whatever the busy timeout (waiting could deadlock): an outside
    audit saw 503s for 2 of 102 moves by two people, and 9 of 12 parallel creations.
    Begun IMMEDIATE, each transaction takes the write lock first and waits its turn, and
    every write lands."""
    outcome = json.loads(_on_embedded_sqlite(tmp_path, _OVERLAPPING_WRITES))
    assert outcome == {"errors": [], "n": 6}


def test_without_a_secret_key_debug_makes_a_random_one_of_its_own(tmp_path: Path) -> None:
    """``make run`` (DEBUG, no SECRET_KEY) used a key written in the source: anyone could
    forge a session cookie for any account on such a server reachable from elsewhere.
    Now the first process makes a random key, readable by its owner only, and every
    process (gunicorn's workers) reads that same one; another checkout gets another."""
    from briscola_service.settings import _dev_secret_key

    path = tmp_path / ".dev-secret-key"
    first = _dev_secret_key(path)
    assert len(first) >= 50 and "insecure" not in first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert _dev_secret_key(path) == first  # the next process, or the next start
    assert _dev_secret_key(tmp_path / "elsewhere") != first
    assert settings.SECRET_KEY != "django-insecure-dev-only-never-use-this-key-in-production"


@pytest.mark.parametrize("content", ["", "  \n", "\n\t \n"])
def test_an_empty_dev_secret_key_file_is_never_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    """A process stopped between making the file and writing the key (or a full disk)
    leaves ``.dev-secret-key`` empty. Not a key: every process refuses to start, naming
    the file and what to do, rather than sign sessions with an empty (or blank) key. Nor
    does it write a new one: a worker would then sign with another key than its siblings,
    which read the file a moment before (a file still being written is waited for)."""
    from django.core.exceptions import ImproperlyConfigured

    from briscola_service import settings as settings_module

    waits: list[float] = []
    monkeypatch.setattr(settings_module, "time", SimpleNamespace(sleep=waits.append))
    path = tmp_path / ".dev-secret-key"
    path.write_text(content, "ascii")
    with pytest.raises(ImproperlyConfigured, match="is empty: delete it, or set SECRET_KEY"):
        settings_module._dev_secret_key(path)
    assert waits  # for the process that may be writing it
    assert path.read_text("ascii") == content

    def written_meanwhile(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 3:
            path.write_text("the-key-another-process-wrote\n", "ascii")

    waits.clear()
    monkeypatch.setattr(settings_module, "time", SimpleNamespace(sleep=written_meanwhile))
    assert settings_module._dev_secret_key(path) == "the-key-another-process-wrote"


@pytest.mark.postgres
@pytest.mark.django_db
def test_postgres_is_the_database() -> None:
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 + 1")
        assert cursor.fetchone() == (2,)


@pytest.mark.redis
def test_redis_answers_ping() -> None:
    import redis

    assert redis.Redis.from_url(settings.REDIS_URL).ping() is True


@pytest.mark.django_db
def test_schema_generates_without_warnings(tmp_path: Path) -> None:
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml")
    )


def _settings_in_subprocess(code: str, **env_overrides: str) -> subprocess.CompletedProcess[str]:
    env: dict[str, Any] = {
        k: v for k, v in os.environ.items() if k not in ("BOT_LEVELS", "BOT_THINK_MS")
    }
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "-c", f"import briscola_service.settings as s; {code}"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_bot_defaults_include_expert_with_a_100_ms_budget() -> None:
    result = _settings_in_subprocess("print(s.BOT_LEVELS, s.BOT_THINK_MS)")
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout.strip()
        == "['random', 'greedy', 'strong', 'learned', 'neural', 'expert', 'expert_v1'] 100"
    )
    result = _settings_in_subprocess("print(s.BOT_THINK_MS)", BOT_THINK_MS="250")
    assert result.stdout.strip() == "250"


@pytest.mark.parametrize("value", ["0", "-5", "100000"])
def test_bot_think_ms_out_of_range_is_refused(value: str) -> None:
    result = _settings_in_subprocess("", BOT_THINK_MS=value)
    assert result.returncode != 0
    assert "BOT_THINK_MS must be between" in result.stderr


def test_bot_task_time_limits_stay_well_above_the_think_budget() -> None:
    budget_s = settings.BOT_THINK_MS_MAX / 1000
    assert settings.BOT_THINK_MS <= settings.BOT_THINK_MS_MAX
    assert 10 * budget_s <= settings.CELERY_TASK_SOFT_TIME_LIMIT
    assert settings.CELERY_TASK_TIME_LIMIT > settings.CELERY_TASK_SOFT_TIME_LIMIT


@pytest.mark.django_db
def test_ensure_bots_creates_the_expert(settings: Any) -> None:
    settings.BOT_LEVELS = ["random", "greedy", "expert"]
    call_command("ensure_bots")
    expert = User.objects.get(username="bot-expert")
    assert expert.is_bot and expert.bot_level == "expert"


@pytest.mark.django_db
def test_an_unknown_format_is_406_not_a_404_of_a_resource_that_exists(
    user_factory: Any, games: Any
) -> None:
    """DRF's ``?format=`` switch used to answer 404 ``not_found`` for a format no renderer
    has; the resource exists, so it is 406 ``not_acceptable`` naming the formats there are."""
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = games.person_match(alice, bob)
    client = APIClient()
    client.force_authenticate(alice)
    for path in (f"/api/v1/matches/{match.pk}", "/api/v1/matches", "/api/v1/auth/me"):
        response = client.get(path, {"format": "xml"})
        assert response.status_code == 406, (path, response.status_code)
        body = response.json()
        assert body["code"] == "not_acceptable", body
        assert body["details"] == {"format": "xml", "formats": ["api", "json"]}
        assert client.get(path, {"format": "json"}).status_code == 200
    # Still 404 for what does not exist, whatever the format asked.
    response = client.get("/api/v1/matches/00000000-0000-0000-0000-000000000000")
    assert response.status_code == 404 and response.json()["code"] == "match_not_found"


@pytest.mark.django_db
def test_an_id_that_cannot_be_one_is_not_found_with_the_resources_code(
    user_factory: Any,
) -> None:
    """``/deals/abc`` and ``/deals/-1`` answer as ``/deals/999999``: ``deal_not_found``;
    ``/auth/tokens/abc`` as ``/auth/tokens/999999``: ``token_not_found``."""
    alice = user_factory(username="alice")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {alice.auth_token.key}")
    for deal in ("999999", "abc", "-1", "1.5", "9" * 30):
        for suffix in ("", "/replay", "/verify", "/export"):
            response = client.get(f"/api/v1/deals/{deal}{suffix}")
            assert response.status_code == 404, (deal, suffix, response.status_code)
            assert response.json()["code"] == "deal_not_found", (deal, suffix)
    for token in ("999999", "abc", "-1"):
        response = client.delete(f"/api/v1/auth/tokens/{token}")
        assert response.status_code == 404, (token, response.status_code)
        assert response.json()["code"] == "token_not_found", token
    # Authentication still comes first.
    response = APIClient().delete("/api/v1/auth/tokens/abc")
    assert response.status_code == 401


def test_an_account_may_stream_every_match_it_may_play() -> None:
    """A bot with as many active matches as it may have (MATCH_ACTIVE_LIMIT) can follow each
    on a stream, with its account stream and a reconnection's overlap besides (the limit
    of streams was 16 where an account could play 20 matches)."""
    assert settings.LIVE_MAX_STREAMS_PER_ACCOUNT >= settings.MATCH_ACTIVE_LIMIT + 2
