"""Django settings, all read from the environment (twelve-factor style).

The defaults make a laptop work with nothing set: DEBUG on, SQLite, Celery tasks run
in-process. Production sets DEBUG=false, SECRET_KEY, DATABASE_URL and REDIS_URL.
"""

import importlib.util
import os
import secrets
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from briscola_service.credentials import CredentialedURL

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()


def _module_exists(name: str) -> bool:
    """True when `name` can be imported (games/ is written in parallel with this project)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


GAMES_APP_PRESENT = _module_exists("games.apps")

# --- Core --------------------------------------------------------------------------------

DEBUG = env.bool("DEBUG", default=True)

DEV_SECRET_KEY_FILE = BASE_DIR / ".dev-secret-key"


def _dev_secret_key(path: Path) -> str:
    """DEBUG with no SECRET_KEY (``make run``): a random key of this checkout's own, made
    once and kept in ``path`` (git ignores it), never a key written in the source. With a
    published key anyone could forge a session cookie, so sign in as any account, the
    admin's included, on a laptop's server reachable from elsewhere (``make run
    HOST=0.0.0.0``). Every worker process reads the same file; the first one writes it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        for _ in range(50):  # another process may be writing it this very moment
            key = path.read_text("ascii").strip()
            if key:
                return key
            time.sleep(0.01)
        raise ImproperlyConfigured(f"{path} is empty: delete it, or set SECRET_KEY.") from None
    key = secrets.token_urlsafe(50)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(key + "\n")
    return key


SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY.strip():  # blank is unset: spaces are a key anyone can guess
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is false.")
    SECRET_KEY = _dev_secret_key(DEV_SECRET_KEY_FILE)

# Another Host is refused: 400, `invalid_host` in the API's error shape under /api/
# (briscola_service.middleware.AllowedHostsMiddleware); /healthz and /readyz answer whatever
# the Host, so a probe by address works with ALLOWED_HOSTS set to the public name only.
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
if DEBUG and "testserver" not in ALLOWED_HOSTS:
    # Django's test client in a DEBUG shell. Never in production; the test suite gets it
    # from Django's setup_test_environment (pytest-django), whatever DEBUG says.
    ALLOWED_HOSTS.append("testserver")
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# CORS (django-cors-headers), for web clients served from another origin: off unless
# CORS_ALLOWED_ORIGINS lists origins (e.g. https://cards.example,http://localhost:5173).
# Only the API; tokens travel in Authorization, never cookies, so no credentials mode.
CORS_ALLOWED_ORIGINS = env.list("CORS_ALLOWED_ORIGINS", default=[])
CORS_URLS_REGEX = r"^/api/.*$"
CORS_ALLOW_CREDENTIALS = False
CORS_ALLOW_HEADERS = [
    "accept",
    "authorization",
    "content-type",
    "idempotency-key",
    "if-none-match",
]
CORS_EXPOSE_HEADERS = ["ETag", "Retry-After", "Idempotent-Replayed", "Location"]
CORS_PREFLIGHT_MAX_AGE = 3600

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's assets served from here, not from a CDN
    "corsheaders",
    "csp",
    "accounts",
    "briscola_service.idempotency",
]
if GAMES_APP_PRESENT:
    INSTALLED_APPS.append("games")

MIDDLEWARE = [
    "briscola_service.logs.RequestIdMiddleware",
    "briscola_service.metrics.RequestMetricsMiddleware",
    # The Host header first (the probes exempt; JSON `invalid_host` under /api/).
    "briscola_service.middleware.AllowedHostsMiddleware",
    # Before the rest: a CORS preflight OPTIONS is answered here, before authentication
    # could refuse it (django-cors-headers).
    "corsheaders.middleware.CorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy on every response (django-csp; CONTENT_SECURITY_POLICY).
    "csp.middleware.CSPMiddleware",
    # Permissions-Policy on every response (django-permissions-policy; PERMISSIONS_POLICY).
    "django_permissions_policy.PermissionsPolicyMiddleware",
    # Static files from the ASGI server itself (compressed, cached), in production too.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # What is computed (not a static file) stays out of shared caches: private, no-cache.
    "briscola_service.middleware.PrivateAnswersMiddleware",
    "briscola_service.middleware.RequestBodyLimitMiddleware",
    "briscola_service.middleware.DatabaseUnavailableMiddleware",
    "briscola_service.middleware.ThrottledLoginMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The pages speak the browser's language (Accept-Language) or the one chosen with the
    # switch (a cookie); English or Italian (LANGUAGES).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Without a broker (make run) deadlines are enforced on the requests' way in.
    "games.clocks.middleware.InProcessClocksMiddleware",
]

ROOT_URLCONF = "briscola_service.urls"
WSGI_APPLICATION = "briscola_service.wsgi.application"
ASGI_APPLICATION = "briscola_service.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # The service's own templates: the API's docs page and the browsable API's, which
        # keep to the Content-Security-Policy (searched before the apps' templates).
        "DIRS": [BASE_DIR / "briscola_service" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ----------------------------------------------------------------------------

DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
# A pool of PostgreSQL connections per process (Django's own, psycopg_pool): at most
# DATABASE_POOL_MAX_SIZE connections, whatever the number of requests. Served by ASGI (the
# default everywhere: make run, the image, Compose), each request runs in a thread of its
# own with a connection of its own, and without a pool nothing capped them: a burst of 160
# requests on 2 workers opened 99 connections and PostgreSQL refused the rest ("too many
# clients", for the Celery workers too). A request's thread takes a connection from the
# pool when it first queries and gives it back when it ends; the streams' reading threads
# (LIVE_DB_THREADS) take theirs from the same pool and keep them. A request that waits
# DATABASE_POOL_TIMEOUT seconds for a free connection answers 503 `service_unavailable`
# with Retry-After (briscola_service.middleware.DatabaseUnavailableMiddleware).
# Sizing (docs/operations.md): web processes x DATABASE_POOL_MAX_SIZE + Celery worker
# processes (one each) + a few for migrate/psql must stay below PostgreSQL's
# max_connections. DATABASE_POOL=false turns it off (e.g. behind PgBouncer).
#
# DATABASE_CONN_MAX_AGE, seconds a connection is kept by its thread between requests: 0.
# Under ASGI a request's thread is never reused, so a kept connection would only pile up
# (Django's docs say the same); the pool is what reuses them, and Django allows no pool
# with it. A sync WSGI server (bench/load.py --worker-class sync) may keep them with e.g.
# 60, which turns the pool off unless DATABASE_POOL=true says otherwise (then refused).
#
# The pool is off by default in the test suite's own process (pytest sets PYTEST_VERSION):
# its fixtures check that no thread leaves a session open, which a pool's idle connections
# would be, and tests run 20 threads at once; the servers that tests start (gunicorn, in a
# process of its own) get it (tests/ops/test_database_pool.py).
DATABASE_CONN_MAX_AGE = env.int("DATABASE_CONN_MAX_AGE", default=0)
DATABASE_POOL = env.bool(
    "DATABASE_POOL", default=DATABASE_CONN_MAX_AGE == 0 and "PYTEST_VERSION" not in os.environ
)
DATABASE_POOL_MAX_SIZE = env.int("DATABASE_POOL_MAX_SIZE", default=20)
# Connections kept open even when idle (0: opened on demand, closed after 10 idle minutes).
DATABASE_POOL_MIN_SIZE = env.int("DATABASE_POOL_MIN_SIZE", default=0)
# The longest a request waits for a connection, a free one or a new one (then 503). Also
# how long the pool retries a connection that failed (its reconnect_timeout): while the
# database is down a request fails after this long, and once it is back the next request
# connects at once, not after a retry backed off for minutes.
DATABASE_POOL_TIMEOUT = env.float("DATABASE_POOL_TIMEOUT", default=3.0)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["CONN_MAX_AGE"] = DATABASE_CONN_MAX_AGE
    if DATABASE_POOL:
        if DATABASE_CONN_MAX_AGE != 0:
            raise ImproperlyConfigured(
                "DATABASE_CONN_MAX_AGE must be 0 with the connection pool (DATABASE_POOL)."
            )
        if not 0 <= DATABASE_POOL_MIN_SIZE <= DATABASE_POOL_MAX_SIZE or DATABASE_POOL_TIMEOUT <= 0:
            raise ImproperlyConfigured(
                "DATABASE_POOL_MIN_SIZE must be between 0 and DATABASE_POOL_MAX_SIZE, and "
                "DATABASE_POOL_TIMEOUT above 0."
            )
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": DATABASE_POOL_MIN_SIZE,
            "max_size": DATABASE_POOL_MAX_SIZE,
            "timeout": DATABASE_POOL_TIMEOUT,
            "reconnect_timeout": DATABASE_POOL_TIMEOUT,
            "name": "briscola",
        }
    # A kept connection is checked before a request reuses it: after a database restart
    # the first request reconnects instead of failing on a dead socket.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    DATABASES["default"]["ATOMIC_REQUESTS"] = False
elif DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # make run's embedded default, where the web workers, the in-process tasks and the
    # streams' reading threads share one file. A write waits up to 20 s for the lock
    # instead of failing at once with "database is locked" (Python's default is 5 s: the
    # re-audit saw a move answered 503 and a bot's reply lost under load), and WAL lets
    # reads go on while a write is made. A transaction begins IMMEDIATE, taking the write
    # lock first: in SQLite's default (deferred) ones, a transaction that read and then
    # writes while another holds the lock fails at once, whatever the timeout (an outside
    # audit: 503s for moves of two people playing at once, and for parallel creations).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis, cache, Celery -----------------------------------------------------------------

# Its password, if any, is masked wherever the value is printed (celery report, diffsettings).
REDIS_URL = CredentialedURL(env.str("REDIS_URL", default=""))

# A Redis that is down or hung costs a request at most this long (the throttles then let
# the request through; see briscola_service/throttling.py).
REDIS_SOCKET_TIMEOUT = 0.5
CACHES: dict[str, dict[str, Any]] = {
    "default": (
        {
            "BACKEND": "briscola_service.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {
                "socket_connect_timeout": REDIS_SOCKET_TIMEOUT,
                "socket_timeout": REDIS_SOCKET_TIMEOUT,
            },
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    ),
}
# The request-rate history of the API throttles (shared by all web workers with Redis).
CACHES["throttle"] = {**CACHES["default"], "KEY_PREFIX": "throttle"}
if not REDIS_URL:
    CACHES["throttle"]["LOCATION"] = "throttle"

# --- Live streams (games/live) -------------------------------------------------------------

# The fan-out bus: Redis pub/sub with REDIS_URL ("redis"), else in-process ("local").
LIVE_BUS = env.str("LIVE_BUS", default="redis" if REDIS_URL else "local")
LIVE_CHANNEL_PREFIX = env.str("LIVE_CHANNEL_PREFIX", default="briscola:live:")
# A comment (SSE) or an empty line (NDJSON) after this many seconds of silence.
LIVE_HEARTBEAT_SECONDS = env.float("LIVE_HEARTBEAT_SECONDS", default=15.0)
# A stream looks at its credentials again (a revoked token, a signed-out session) when the
# account's change, and at least this often besides, in case that message was lost.
LIVE_CREDENTIALS_SECONDS = env.float("LIVE_CREDENTIALS_SECONDS", default=60.0)
# Open streams per account (per web process); one more answers 429 too_many_streams. Room
# for a stream of each of the account's active matches (MATCH_ACTIVE_LIMIT, 20), its
# account streams and the overlap of reconnections: a bot can follow all it may play.
LIVE_MAX_STREAMS_PER_ACCOUNT = env.int("LIVE_MAX_STREAMS_PER_ACCOUNT", default=32)
# Open streams per client address (per web process), whatever the accounts: one more
# answers 429 too_many_streams (details.per "address"). Each stream costs an event built
# at every change of its match; room for a few people behind one address, or a bot
# author's several accounts, each following a few matches.
LIVE_MAX_STREAMS_PER_ADDRESS = env.int("LIVE_MAX_STREAMS_PER_ADDRESS", default=64)
# Open streams in all (per web process, ~90 KiB each); one more answers 503 streams_full.
LIVE_MAX_STREAMS = env.int("LIVE_MAX_STREAMS", default=4000)
# The Retry-After (seconds) of a refused stream (429 too_many_streams, 503 streams_full).
LIVE_STREAMS_RETRY_AFTER = env.int("LIVE_STREAMS_RETRY_AFTER", default=5)
# Threads (each with its database connection) that read matches for all streams of a process.
LIVE_DB_THREADS = env.int("LIVE_DB_THREADS", default=4)
# Those threads keep their connections (whatever DATABASE_CONN_MAX_AGE says), closing one
# only when an error left it unusable; false: a new connection for every read.
LIVE_DB_KEEP_CONNECTIONS = env.bool("LIVE_DB_KEEP_CONNECTIONS", default=True)
if (
    "pool" in DATABASES["default"].get("OPTIONS", {})
    and LIVE_DB_KEEP_CONNECTIONS
    and DATABASE_POOL_MAX_SIZE <= LIVE_DB_THREADS
):
    # Those threads keep pooled connections: the requests need some left.
    raise ImproperlyConfigured("DATABASE_POOL_MAX_SIZE must be above LIVE_DB_THREADS.")
# What EventSource waits before reconnecting (SSE `retry:`), in milliseconds. Each opening
# counts in the account's request rate (THROTTLE_USER_RATE): 2 s is 30 a minute a stream.
LIVE_RETRY_MS = env.int("LIVE_RETRY_MS", default=2000)

CELERY_BROKER_URL = REDIS_URL or "memory://"
# Without a broker, tasks run in-process at .delay() time, and their errors surface.
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = not REDIS_URL
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 30
CELERY_TASK_SOFT_TIME_LIMIT = 20
CELERY_TASK_DEFAULT_QUEUE = "briscola"
# Sending a task while Redis is down: a few quick retries, then the caller logs it and goes
# on (the move that queued it stands; the periodic sweeps queue it again later).
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.1,
    "interval_max": 0.2,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 1.0
# With late acknowledgement, a task whose worker died (SIGKILL, a lost machine) stays
# unacknowledged in Redis and is delivered again after this many seconds. It must stay
# above the longest task (CELERY_TASK_TIME_LIMIT) or a slow task would run twice (harmless
# here, every task is idempotent, but wasted).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=300),
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The replies of the slow bot levels (BOT_SLOW_LEVELS: a search of BOT_THINK_MS each) have
# their own task and queue, so a flood of them never delays the other bots' replies or the
# sweeps. Both queues are declared, so a worker started without -Q consumes both;
# docker-compose runs one worker per queue.
CELERY_TASK_QUEUES = [
    Queue(CELERY_TASK_DEFAULT_QUEUE),
    Queue(env.str("BOT_EXPERT_QUEUE", default="briscola_expert")),
]
CELERY_TASK_ROUTES = {"games.tasks.bot_play_expert": {"queue": CELERY_TASK_QUEUES[1].name}}
CELERY_TIMEZONE = "UTC"
# Periodic sweeps re-queue work that was lost; apps may add entries to this dict.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "sweep-pending-bot-moves": {
        "task": "games.tasks.sweep_pending_bot_moves",
        "schedule": env.float("BOT_SWEEP_SECONDS", default=30.0),
    },
    "ratings-sweep": {
        "task": "games.tasks.ratings_sweep",
        "schedule": 60.0,
    },
    # Time limits (games.clocks): passed deadlines, expired invitations and waiting
    # matches; one indexed query each, so it can run every second.
    "clocks-sweep": {
        "task": "games.tasks.clocks_sweep",
        "schedule": env.float("CLOCK_SWEEP_SECONDS", default=1.0),
    },
    "idempotency-keys-cleanup": {
        "task": "idempotency.tasks.idempotency_keys_cleanup",
        "schedule": 3600.0,
    },
}

# --- Auth --------------------------------------------------------------------------------

AUTH_USER_MODEL = "accounts.User"
# The pages' sign-in (games/play); the admin keeps its own.
LOGIN_URL = "play-signin"
LOGIN_REDIRECT_URL = "play-lobby"
LOGOUT_REDIRECT_URL = "play-signin"
AUTHENTICATION_BACKENDS = ["accounts.backends.PeopleOnlyBackend"]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Whether an account has sat in a match (accounts never imports games: a dotted path).
ACCOUNTS_HAS_PLAYED = "games.players.selectors.user_has_played"
# The bot levels there are (their names), which the user admin offers (a dotted path too).
ACCOUNTS_BOT_LEVELS = "games.bots.LEVELS"

# Bot accounts that `manage.py ensure_bots` creates (user names bot-<level>).
BOT_LEVELS = env.list(
    "BOT_LEVELS", default=["random", "greedy", "strong", "learned", "neural", "expert", "expert_v1"]
)
# How long a searching bot (expert) may think per move, in milliseconds. The bot task's
# time limits (CELERY_TASK_SOFT_TIME_LIMIT 20 s, CELERY_TASK_TIME_LIMIT 30 s) stay at least
# ten times above the largest budget allowed here.
BOT_THINK_MS = env.int("BOT_THINK_MS", default=100)
BOT_THINK_MS_MAX = 2000  # a tenth of the task's soft time limit
# The sweep re-queues a bot reply once the deal has waited on the bot this long.
BOT_SWEEP_AFTER_SECONDS = env.float("BOT_SWEEP_AFTER_SECONDS", default=10.0)
# The bot sweep queues at most this many replies per run, oldest first.
BOT_SWEEP_LIMIT = env.int("BOT_SWEEP_LIMIT", default=500)
# Bot levels whose replies go to the slow queue (BOT_EXPERT_QUEUE): the searching ones
# (about BOT_THINK_MS a move; the others take well under a millisecond).
BOT_SLOW_LEVELS = env.list("BOT_SLOW_LEVELS", default=["expert", "expert_v1"])
# Fair bot work between accounts (briscola_service/fair_queues.py, issue 19.3): with a
# broker, each bot reply waits in its account's queue in Redis (the account that opened the
# match) and workers take them round-robin between accounts, at most BOT_FAIR_CONCURRENCY
# at once per account; a lease whose task was lost expires after BOT_FAIR_LEASE_SECONDS.
# Off: replies run in the order they were queued (first in, first out).
BOT_FAIR_QUEUEING = env.bool("BOT_FAIR_QUEUEING", default=True)
BOT_FAIR_CONCURRENCY = env.int("BOT_FAIR_CONCURRENCY", default=2)
BOT_FAIR_LEASE_SECONDS = env.float("BOT_FAIR_LEASE_SECONDS", default=CELERY_TASK_TIME_LIMIT)
BOT_FAIR_KEY_PREFIX = "briscola:fair:"

# Time limits, invitations and abandoned matches (games.clocks).
# Matches waiting or being played per account (people; 0: no cap). Over it: 429
# too_many_active_matches.
MATCH_ACTIVE_LIMIT = env.int("MATCH_ACTIVE_LIMIT", default=20)
# A waiting match (an invitation, an open seat) is called off after this long.
INVITATION_EXPIRY_HOURS = env.float("INVITATION_EXPIRY_HOURS", default=24.0)
# An untimed match whose person to move has not played for this long ends: their side
# loses ("abandoned"), or the match is aborted if they never played a card.
MATCH_IDLE_HOURS = env.float("MATCH_IDLE_HOURS", default=72.0)
# The deadline sweep acts on at most this many matches per run, oldest deadline first.
CLOCK_SWEEP_LIMIT = env.int("CLOCK_SWEEP_LIMIT", default=500)
# Without a broker (make run), requests run that sweep in the web process, at most once
# per this many seconds (games.clocks.middleware).
CLOCK_IN_PROCESS_SWEEP_SECONDS = env.float("CLOCK_IN_PROCESS_SWEEP_SECONDS", default=1.0)

# Rated results between the same two people within this many hours count less, then not
# at all (games.rated_games, "Repeated results").
RATING_REPEAT_WINDOW_HOURS = env.float("RATING_REPEAT_WINDOW_HOURS", default=24.0)
if BOT_FAIR_CONCURRENCY < 1 or BOT_FAIR_LEASE_SECONDS <= 0:
    raise ImproperlyConfigured(
        "BOT_FAIR_CONCURRENCY must be at least 1 and BOT_FAIR_LEASE_SECONDS above 0."
    )
if not 1 <= BOT_THINK_MS <= BOT_THINK_MS_MAX:
    raise ImproperlyConfigured(f"BOT_THINK_MS must be between 1 and {BOT_THINK_MS_MAX}.")

# --- I18n, static ------------------------------------------------------------------------

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("it", "Italiano")]
TIME_ZONE = "UTC"
# The service's own words outside its apps (the admin's refusal page), in Italian too.
LOCALE_PATHS = [BASE_DIR / "briscola_service" / "locale"]
# Times to the second on the admin's pages (briscola_service/formats).
FORMAT_MODULE_PATH = ["briscola_service.formats"]
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "briscola_service" / "static"]
# WhiteNoise serves STATIC_ROOT (filled by collectstatic: the Dockerfile and `make run` run
# it); in DEBUG it also finds files in the apps directly, so a new file needs no collect.
WHITENOISE_USE_FINDERS = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- Play pages (games/play) --------------------------------------------------------------

# How long a trick just taken stays on the table, its winner marked, before the next card
# led is drawn (unless the person plays first); also how long a deal's last trick shows
# before the deal's end covers it. The browser tests that only play deals through shorten it.
PLAY_TRICK_HOLD_SECONDS = env.float("PLAY_TRICK_HOLD_SECONDS", default=1.5)

# --- API ---------------------------------------------------------------------------------

# Bodies above this size get a JSON 413 `request_too_large` (RequestBodyLimitMiddleware);
# the largest legitimate body, a deal record sent to /records/check, is at most 64 kB.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=256 * 1024)

# How long an Idempotency-Key is remembered (at least 24 hours); a periodic task
# (idempotency-keys-cleanup) deletes older ones.
_idempotency_key_ttl_hours = env.int("IDEMPOTENCY_KEY_TTL_HOURS", default=24)
if _idempotency_key_ttl_hours < 24:
    raise ImproperlyConfigured("IDEMPOTENCY_KEY_TTL_HOURS must be at least 24.")
IDEMPOTENCY_KEY_TTL = timedelta(hours=_idempotency_key_ttl_hours)


def _throttle_rate(name: str, default: str) -> str | None:
    """A DRF rate such as "600/min"; "none" (or empty) turns that throttle off."""
    value = env.str(name, default=default).strip()
    return None if value.lower() in ("", "none", "off") else value


REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "briscola_service.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_SCHEMA_CLASS": "briscola_service.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "briscola_service.pagination.StandardPagination",
    "PAGE_SIZE": 20,
    "EXCEPTION_HANDLER": "briscola_service.exceptions.api_exception_handler",
    # Request bodies are JSON only: another media type is 415 `unsupported_media_type`
    # (and the schema advertises application/json only, which generated clients need).
    "DEFAULT_PARSER_CLASSES": ["briscola_service.parsers.JSONParser"],
    # Anonymous requests by client IP, signed-in ones by account (429 `throttled` with
    # `details.retry_after` and a Retry-After header). Generous: normal play never meets
    # them; they stop floods and password guessing.
    "DEFAULT_THROTTLE_CLASSES": [
        "briscola_service.throttling.AnonThrottle",
        "briscola_service.throttling.UserThrottle",
    ],
    # Counted atomically (Redis INCR in a Lua script; see briscola_service/throttling.py).
    "DEFAULT_THROTTLE_RATES": {
        "anon": _throttle_rate("THROTTLE_ANON_RATE", "60/min"),
        "user": _throttle_rate("THROTTLE_USER_RATE", "600/min"),
        # Every password check (API token and register, the admin's and the browsable
        # API's login forms), per client IP and per user name.
        "login_ip": _throttle_rate("THROTTLE_LOGIN_IP_RATE", "20/min"),
        "login_user": _throttle_rate("THROTTLE_LOGIN_USER_RATE", "10/min"),
        # Requests with a wrong API token, per client IP.
        "auth_failure": _throttle_rate("THROTTLE_AUTH_FAILURE_RATE", "30/min"),
    },
    # The client IP is REMOTE_ADDR unless told how many proxies append X-Forwarded-For
    # (a client could otherwise pick its own address and dodge the anonymous throttle).
    "NUM_PROXIES": env.int("NUM_PROXIES", default=0),
}

SPECTACULAR_SETTINGS = {
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "TITLE": "Briscola service API",
    "DESCRIPTION": (
        "Play Briscola, the Italian trick-taking card game, against people and bots. "
        "Authenticate with `Authorization: Bearer <key>` (or `Token <key>`): the account's "
        "token from /api/v1/auth/register or /api/v1/auth/token, or a personal access "
        "token from /api/v1/auth/tokens (scopes `read`, `play`). "
        "Every error has the shape {code, message, details}."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Nullable fields are declared nullable; enums get their own components.
    "ENUM_ADD_EXPLICIT_BLANK_NULL_CHOICE": False,
    "ENUM_NAME_OVERRIDES": {
        "MatchStatusEnum": "games.models.MatchStatus",
        "DealStatusEnum": "games.models.DealStatus",
        "MatchFormatEnum": "games.models.MatchFormat",
        "EndReasonEnum": "games.models.EndReason",
        "RecordFormatEnum": ["briscola-deal/1"],
        # An event's (or replay step's) `type`: one enum of one value per type.
        **{
            "".join(p.title() for p in name.split("_")) + "TypeEnum": [name]
            for name in [
                "match_created",
                "match_started",
                "deal_started",
                "hand_dealt",
                "card_played",
                "trick_won",
                "card_drawn",
                "deal_ended",
                "deal_abandoned",
                "match_ended",
            ]
        },
        # The live streams' events (games.live.serializers): the stream code's own constants.
        "MatchStreamChangeEnum": "games.live.events.MatchStreamChange",
        "AccountStreamChangeEnum": "games.live.streams.AccountStreamChange",
        "AccountTypeEnum": "games.live.serializers.ACCOUNT_TYPE",
        "StreamClosedTypeEnum": "games.live.serializers.STREAM_CLOSED_TYPE",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "briscola_service.openapi.postprocess",
    ],
    "TAGS": [
        {"name": "matches", "description": "Create, join and play matches: the core."},
        {"name": "deals", "description": "A finished deal's full record."},
        {"name": "replays", "description": "Replays, exports, verification, record checks."},
        {"name": "players", "description": "Profiles, ratings, the leaderboard."},
        {"name": "auth", "description": "Accounts and tokens."},
    ],
}

# --- Logging -----------------------------------------------------------------------------

LOG_LEVEL = env.str("LOG_LEVEL", default="INFO").upper()
# One JSON object per line in production (a log pipeline parses it); plain lines under
# `make run`. Every line carries the request id (briscola_service.logs).
LOG_FORMAT = env.str("LOG_FORMAT", default="plain" if DEBUG else "json")
if LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured("LOG_FORMAT is plain or json.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "briscola_service.logs.RequestIdFilter"},
        "quiet_routine": {"()": "briscola_service.logs.QuietRoutineFilter"},
    },
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(request_id)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            # The periodic tasks' lines when they did nothing are dropped unless asked for.
            "filters": ["request_id"]
            + ([] if env.bool("LOG_ROUTINE_TASKS", default=False) else ["quiet_routine"]),
        },
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django": {"handlers": ["console"], "level": LOG_LEVEL, "propagate": False},
    },
}
# Celery workers log through the handlers above (JSON in production), not their own.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# --- Operations: health and metrics ------------------------------------------------------

# /statusz wants a worker seen this recently (beat queues the heartbeat every 10 s).
WORKER_SEEN_SECONDS = env.int("WORKER_SEEN_SECONDS", default=60)
CELERY_BEAT_SCHEDULE["worker-heartbeat"] = {
    "task": "briscola_service.celery.worker_heartbeat",
    "schedule": 10.0,
}
# /metrics is served to these client addresses (as the throttles see them, NUM_PROXIES)
# and to requests carrying `Authorization: Bearer <METRICS_TOKEN>` when that is set.
METRICS_ALLOWED_IPS = env.list("METRICS_ALLOWED_IPS", default=["127.0.0.1", "::1"])
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
# A Celery worker serves its own metrics on this port when set (0: not at all).
CELERY_METRICS_PORT = env.int("CELERY_METRICS_PORT", default=0)
CELERY_METRICS_ADDR = env.str("CELERY_METRICS_ADDR", default="127.0.0.1")

# --- Content-Security-Policy -------------------------------------------------------------

# What a page may load and run: only this origin's own scripts, styles, images and
# requests (the live streams included), no inline script or style, no plugin, no frame,
# no <base>, forms posted only here. Whatever an attacker managed to put into a page (a
# user name, a message) could not run, load from or send to elsewhere. Every page keeps
# to it: tests/browser/test_content_security_policy.py visits each one, the admin and the
# API's docs included, and fails on any violation the browser reports.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# What the pages may ask the browser for: nothing of the device. No page of the service uses
# a camera, a microphone, a position, sensors, payments or USB, so none may, even one an
# attacker managed to change; nor may any page be used to profile its visitors' interests.
PERMISSIONS_POLICY: dict[str, list[str]] = {
    feature: []
    for feature in (
        "accelerometer",
        "browsing-topics",
        "camera",
        "display-capture",
        "geolocation",
        "gyroscope",
        "hid",
        "magnetometer",
        "microphone",
        "midi",
        "payment",
        "publickey-credentials-get",
        "serial",
        "usb",
    )
}

# --- Production hardening ----------------------------------------------------------------

if not DEBUG:
    # TLS is usually terminated by a proxy in front of gunicorn: trust its header if told to.
    if env.bool("SECURE_PROXY_SSL_HEADER", default=False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    # A probe calls the server by its address over plain HTTP (Compose's healthcheck, a load
    # balancer's, a monitor's): the probes answer it there instead of redirecting to https.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^statusz$"]
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    # HSTS is sent only over HTTPS; a year, subdomains included, unless told otherwise.
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
    if not SECURE_HSTS_PRELOAD:
        # Preloading asks browser vendors to hard-code HTTPS for the whole domain, which
        # is hard to undo: the operator opts in (SECURE_HSTS_PRELOAD=true), not a default.
        SILENCED_SYSTEM_CHECKS = ["security.W021"]
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"
    X_FRAME_OPTIONS = "DENY"
