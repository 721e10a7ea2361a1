"""Throttling: anonymous requests per client IP, signed-in ones per account; a structured
429 that says when to retry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.cache import caches
from rest_framework.test import APIClient

from accounts.models import User
from tests.conftest import DEFAULT_PASSWORD
from tests.hardening.conftest import assert_clean_error

TOKEN = "/api/v1/auth/token"
ME = "/api/v1/auth/me"

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(settings: Any) -> Callable[..., None]:
    def set_rates(
        *,
        anon: str | None = None,
        user: str | None = None,
        login_ip: str | None = None,
        login_user: str | None = None,
        auth_failure: str | None = None,
    ) -> None:
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {
                "anon": anon,
                "user": user,
                "login_ip": login_ip,
                "login_user": login_user,
                "auth_failure": auth_failure,
            },
        }

    return set_rates


def assert_throttled(response: Any) -> None:
    body = assert_clean_error(response, 429, "throttled")
    retry_after = body["details"]["retry_after"]
    assert isinstance(retry_after, int) and 1 <= retry_after <= 60
    assert response["Retry-After"] == str(retry_after)


def test_the_defaults_are_generous() -> None:
    assert django_settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] == {
        "anon": "60/min",
        "user": "600/min",
        "login_ip": "20/min",
        "login_user": "10/min",
        "auth_failure": "30/min",
    }


def test_anonymous_requests_are_throttled_per_ip(rates: Callable[..., None]) -> None:
    rates(anon="3/min")
    client = APIClient(REMOTE_ADDR="203.0.113.7")
    body = {"username": "nobody", "password": "wrong-password"}
    for _ in range(3):
        assert client.post(TOKEN, body, format="json").status_code == 401
    assert_throttled(client.post(TOKEN, body, format="json"))
    # X-Forwarded-For is not trusted by default: it cannot pick another address.
    assert_throttled(client.post(TOKEN, body, format="json", HTTP_X_FORWARDED_FOR="198.51.100.9"))
    other = APIClient(REMOTE_ADDR="203.0.113.8")
    assert other.post(TOKEN, body, format="json").status_code == 401


def test_signed_in_requests_are_throttled_per_account(
    rates: Callable[..., None],
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
) -> None:
    rates(user="4/min")
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    client = auth_client(alice)
    for _ in range(4):
        assert client.get(ME).status_code == 200
    assert_throttled(client.get(ME))
    assert_throttled(client.post("/api/v1/matches", {"players": 2, "seats": ["open"]}))
    assert auth_client(bob).get(ME).status_code == 200


def test_a_rate_of_none_turns_a_throttle_off(
    rates: Callable[..., None], user_factory: Callable[..., User], auth_client: Any
) -> None:
    """More requests than the default rates allow (so a fallback to a default would be
    throttled), signed in and anonymous. (``rates`` turns off the login and
    failed-authentication throttles too.)"""
    defaults = django_settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    beyond = {scope: int(defaults[scope].split("/")[0]) + 1 for scope in ("anon", "user")}
    assert beyond == {"anon": 61, "user": 601}
    rates(anon=None, user=None)
    client = auth_client(user_factory())
    for _ in range(beyond["user"]):
        assert client.get(ME).status_code == 200
    anonymous = APIClient(REMOTE_ADDR="203.0.113.9")
    body = {"username": "nobody", "password": "wrong-password"}
    for _ in range(beyond["anon"]):
        assert anonymous.post(TOKEN, body, format="json").status_code == 401


# --- Password checks and failed token authentications (issue 19, item 4) -----------------

REGISTER = "/api/v1/auth/register"


def test_wrong_passwords_from_elsewhere_cannot_lock_a_person_out(
    rates: Callable[..., None], user_factory: Callable[..., User]
) -> None:
    """The audit locked V out: 10 wrong passwords for V from one address, then V's right
    password from another was 429 (the name's counter counted every attempt from
    anywhere, and refused before the check). Failures now count per (address, name): the
    attacker's address is stopped, V's is not."""
    rates(login_user="3/min")
    user_factory(username="victim")
    attacker = APIClient(REMOTE_ADDR="203.0.113.66")
    wrong = {"username": "Victim", "password": "wrong-password"}
    for _ in range(3):
        assert attacker.post(TOKEN, wrong, format="json").status_code == 401
    assert_throttled(attacker.post(TOKEN, wrong, format="json"))
    right = {"username": "victim", "password": DEFAULT_PASSWORD}
    # Brute force from that address is stopped: the right password is refused there too.
    assert_throttled(attacker.post(TOKEN, right, format="json"))
    # The victim, elsewhere, signs in; and again (successes do not count).
    victim = APIClient(REMOTE_ADDR="198.51.100.20")
    for _ in range(5):
        assert victim.post(TOKEN, right, format="json").status_code == 200
    # Another name from the attacker's address is not concerned.
    other = {"username": "someone-else", "password": "wrong-password"}
    assert attacker.post(TOKEN, other, format="json").status_code == 401


@pytest.mark.parametrize("path", ["/play/signin/", "/admin/login/", "/api-auth/login/"])
def test_the_login_forms_cannot_be_locked_from_elsewhere_either(
    path: str, rates: Callable[..., None], user_factory: Callable[..., User]
) -> None:
    from django.test import Client

    rates(login_ip="100/min", login_user="3/min")
    user_factory(username="staffer", is_staff=True)
    attacker = APIClient(REMOTE_ADDR="203.0.113.66")
    for _ in range(4):
        attacker.post(TOKEN, {"username": "staffer", "password": "wrong"}, format="json")
    attacking_form = Client(REMOTE_ADDR="203.0.113.66")
    response = attacking_form.post(path, {"username": "staffer", "password": DEFAULT_PASSWORD})
    assert response.status_code == 429
    form = Client(REMOTE_ADDR="198.51.100.20")
    response = form.post(path, {"username": "staffer", "password": DEFAULT_PASSWORD})
    assert response.status_code == 302


def test_guessing_over_many_addresses_meets_the_names_ceiling(
    rates: Callable[..., None], user_factory: Callable[..., User]
) -> None:
    """Failures for one name from every address together: at most ``login_user_all``
    (ten times ``login_user`` unless set), then the name's checks are refused from
    every address, a new one and the right password included."""
    from briscola_service import throttling

    rates(login_user="3/min")
    assert throttling.rate_of("login_user_all") == (30, 60)
    user_factory(username="victim")
    wrong = {"username": "victim", "password": "wrong-password"}
    for n in range(15):  # 15 addresses, 2 guesses each: under login_user everywhere
        client = APIClient(REMOTE_ADDR=f"203.0.113.{n}")
        for _ in range(2):
            assert client.post(TOKEN, wrong, format="json").status_code == 401
    right = {"username": "VICTIM", "password": DEFAULT_PASSWORD}
    assert_throttled(APIClient(REMOTE_ADDR="198.51.100.99").post(TOKEN, right, format="json"))
    assert_throttled(APIClient(REMOTE_ADDR="203.0.113.200").post(TOKEN, wrong, format="json"))
    other = {"username": "someone-else", "password": "wrong-password"}
    assert APIClient(REMOTE_ADDR="203.0.113.0").post(TOKEN, other, format="json").status_code == 401


def test_the_names_ceiling_can_be_set_on_its_own(
    rates: Callable[..., None], settings: Any, user_factory: Callable[..., User]
) -> None:
    from briscola_service import throttling

    rates(login_user="3/min")
    settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["login_user_all"] = "4/min"
    assert throttling.rate_of("login_user_all") == (4, 60)
    user_factory(username="victim")
    wrong = {"username": "victim", "password": "wrong-password"}
    for n in range(4):
        assert (
            APIClient(REMOTE_ADDR=f"203.0.113.{n}").post(TOKEN, wrong, format="json").status_code
            == 401
        )
    assert_throttled(APIClient(REMOTE_ADDR="203.0.113.9").post(TOKEN, wrong, format="json"))
    settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["login_user_all"] = None
    assert throttling.rate_of("login_user_all") is None
    assert APIClient(REMOTE_ADDR="203.0.113.9").post(TOKEN, wrong, format="json").status_code == 401


def test_the_default_names_ceiling_is_ten_times_the_per_address_limit() -> None:
    from briscola_service import throttling

    assert throttling.rate_of("login_user") == (10, 60)
    assert throttling.rate_of("login_user_all") == (100, 60)


def test_password_checks_are_throttled_per_ip_across_user_names(
    rates: Callable[..., None],
) -> None:
    rates(login_ip="3/min")
    client = APIClient(REMOTE_ADDR="203.0.113.7")
    for n in range(3):
        body = {"username": f"name{n}", "password": "wrong-password"}
        assert client.post(TOKEN, body, format="json").status_code == 401
    assert_throttled(client.post(TOKEN, {"username": "x", "password": "y"}, format="json"))
    # Registering sets a password (a hash as costly as a check): the same budget.
    body = {"username": "newcomer", "password": DEFAULT_PASSWORD}
    assert_throttled(client.post(REGISTER, body, format="json"))
    assert (
        APIClient(REMOTE_ADDR="203.0.113.8").post(REGISTER, body, format="json").status_code == 201
    )


def test_the_sign_up_page_has_the_password_checks_budget(rates: Callable[..., None]) -> None:
    """The security audit made 25 accounts in 18 s through /play/signup/ (each a password
    hash), where the API's auth/register stops at 20 a minute: the page now counts the
    same budget, per client IP and per user name."""
    from django.test import Client

    rates(login_ip="3/min", login_user="100/min")
    client = Client(REMOTE_ADDR="203.0.113.7")
    for n in range(3):
        body = {"username": f"newcomer{n}", "password": DEFAULT_PASSWORD}
        assert client.post("/play/signup/", body).status_code == 302
        client.post("/play/signout/")
    response = client.post("/play/signup/", {"username": "spammer", "password": DEFAULT_PASSWORD})
    assert response.status_code == 429
    assert response["Content-Type"].startswith("text/html")
    assert f"Try again in {response['Retry-After']} seconds" in response.content.decode()
    assert not User.objects.filter(username="spammer").exists()
    other = Client(REMOTE_ADDR="203.0.113.8")
    body = {"username": "spammer", "password": DEFAULT_PASSWORD}
    assert other.post("/play/signup/", body).status_code == 302


@pytest.mark.parametrize("path", ["/api-auth/login/", "/admin/login/"])
def test_the_login_forms_are_throttled_and_answer_429_with_retry_after(
    path: str, rates: Callable[..., None], user_factory: Callable[..., User]
) -> None:
    from django.test import Client

    rates(login_ip="100/min", login_user="3/min")
    user_factory(username="staffer", is_staff=True)
    client = Client(REMOTE_ADDR="203.0.113.7")
    wrong = {"username": "staffer", "password": "wrong-password"}
    for _ in range(3):
        response = client.post(path, wrong)
        assert response.status_code == 200  # the form again, with its error
    response = client.post(path, {"username": "staffer", "password": DEFAULT_PASSWORD})
    assert response.status_code == 429
    assert response["Content-Type"].startswith("text/html")
    retry_after = int(response["Retry-After"])
    assert 1 <= retry_after <= 60
    assert f"Try again in {retry_after} seconds" in response.content.decode()


def test_failed_token_authentications_are_throttled_per_ip(
    rates: Callable[..., None], user_factory: Callable[..., User]
) -> None:
    rates(auth_failure="3/min")
    client = APIClient(REMOTE_ADDR="203.0.113.7")
    for n in range(3):
        response = client.get(ME, HTTP_AUTHORIZATION=f"Token made-up-{n}")
        assert_clean_error(response, 401, "authentication_failed")
    user = user_factory(username="alice")
    from rest_framework.authtoken.models import Token

    key = Token.objects.get(user=user).key
    # Over the limit: a wrong token is 429, told to slow down...
    assert_throttled(client.get(ME, HTTP_AUTHORIZATION="Token made-up-4"))
    assert_throttled(client.get(ME, HTTP_AUTHORIZATION="Bearer made-up-5"))
    # ...and a right one from the same address is served: one client retrying a stale
    # token locked out every client behind its address (the outside audit).
    for _ in range(3):
        assert client.get(ME, HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    assert_throttled(client.get(ME, HTTP_AUTHORIZATION="Token made-up-6"))
    # Another address is not concerned, and successes are not counted.
    other = APIClient(REMOTE_ADDR="203.0.113.8")
    for _ in range(5):
        assert other.get(ME, HTTP_AUTHORIZATION=f"Token {key}").status_code == 200


@pytest.fixture(params=["local", pytest.param("redis", marks=pytest.mark.redis)])
def counters(request: Any, settings: Any) -> str:
    """The throttle counters of one process (``make run``) or of Redis (deployed)."""
    if request.param == "local":
        settings.CACHES = {
            **settings.CACHES,
            "throttle": {
                "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                "LOCATION": "throttle-local-test",
                "KEY_PREFIX": settings.CACHES["throttle"]["KEY_PREFIX"],
            },
        }
    else:
        from django.core.cache.backends.redis import RedisCache

        assert isinstance(caches["throttle"], RedisCache)
    caches["throttle"].clear()
    return str(request.param)


def _at_once(threads: int, work: Callable[[], None]) -> None:
    """``work`` in ``threads`` threads started together."""
    import threading

    start = threading.Barrier(threads)

    def worker() -> None:
        start.wait()
        work()

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()


def _in_flight_together(threads: int, attempt: Callable[[], None], each: int = 1) -> int:
    """``threads`` threads making ``attempt`` ``each`` times at once; how many attempts
    were not throttled."""
    from rest_framework.exceptions import Throttled

    passed: list[int] = []

    def work() -> None:
        for _ in range(each):
            try:
                attempt()
            except Throttled:
                continue
            passed.append(1)  # list.append is atomic

    _at_once(threads, work)
    return len(passed)


def test_the_counters_never_let_more_than_the_limit_through_in_parallel(
    rates: Callable[..., None], counters: str
) -> None:
    """Redis's counters (every process together) and, without Redis (make run: one
    process), the process-local ones are exact."""
    from briscola_service import throttling

    rates(anon="50/min")
    served = _in_flight_together(8, lambda: throttling.check("anon", "203.0.113.50"), each=25)
    assert served == 50


def test_wrong_passwords_in_flight_together_never_pass_the_names_limit(
    rates: Callable[..., None], counters: str
) -> None:
    """The outside audit sent 30 wrong passwords for one name at once from one address:
    20 were checked where 10 are allowed (the name's counters were read before the checks
    and counted after them: every check in flight passed). Each check now counts as a
    failure from its start: however many are in flight, at most the limit are made."""
    from django.test import RequestFactory
    from rest_framework.exceptions import Throttled

    from briscola_service import throttling

    rates(login_ip="100/min", login_user="10/min")
    request = RequestFactory().post("/", REMOTE_ADDR="203.0.113.77")
    checked = _in_flight_together(
        30, lambda: throttling.check_password_attempt(request, "Alice")
    )  # ...and every one of them failed: nothing given back
    assert checked == 10
    with pytest.raises(Throttled):
        throttling.check_password_attempt(request, "alice")
    # A check that did not fail gives its place back: one more may be made.
    throttling.password_check_passed(request, "alice")
    throttling.check_password_attempt(request, "ALICE")


def test_a_right_password_between_wrong_ones_is_not_counted_as_one(
    rates: Callable[..., None], user_factory: Callable[..., User], counters: str
) -> None:
    rates(login_user="3/min")
    user_factory(username="alice")
    client = APIClient(REMOTE_ADDR="203.0.113.78")
    wrong = {"username": "alice", "password": "wrong-password"}
    right = {"username": "alice", "password": DEFAULT_PASSWORD}
    for _ in range(2):
        assert client.post(TOKEN, wrong, format="json").status_code == 401
    for _ in range(5):
        assert client.post(TOKEN, right, format="json").status_code == 200
    # A body refused before any check (no password) is not a failure either.
    assert client.post(TOKEN, {"username": "alice"}, format="json").status_code == 400
    assert client.post(TOKEN, wrong, format="json").status_code == 401  # the third
    assert_throttled(client.post(TOKEN, wrong, format="json"))


def test_wrong_tokens_in_flight_together_get_no_more_401s_than_the_limit(
    rates: Callable[..., None], counters: str
) -> None:
    """The outside audit sent 80 wrong tokens at once from one address: 48 were answered
    401 where 30 are allowed (the counter was read before the lookups and counted after
    them). Counted atomically after the lookup, exactly the limit are 401, the rest 429."""
    import time
    from unittest import mock

    from django.test import RequestFactory
    from rest_framework.exceptions import AuthenticationFailed, Throttled
    from rest_framework.request import Request

    from briscola_service.authentication import TokenAuthentication

    rates(auth_failure="5/min")
    answers: list[str] = []

    def slow_wrong(self: Any, key: str) -> Any:
        time.sleep(0.2)  # the lookups of all the threads overlap
        raise AuthenticationFailed("Invalid token.")

    factory = RequestFactory()

    def attempt() -> None:
        request = Request(
            factory.get(ME, REMOTE_ADDR="203.0.113.79", HTTP_AUTHORIZATION="Bearer abc123")
        )
        try:
            TokenAuthentication().authenticate(request)
        except AuthenticationFailed:
            answers.append("401")
        except Throttled:
            answers.append("429")

    with mock.patch.object(TokenAuthentication, "authenticate_credentials", slow_wrong):
        _in_flight_together(20, attempt)
    assert sorted(answers) == ["401"] * 5 + ["429"] * 15


# --- Opening a live stream is a request like any other --------------------------------------

SSE = "text/event-stream"
NDJSON = "application/x-ndjson"


def _open_stream(client: APIClient, path: str, accept: str = SSE) -> Any:
    """One stream opening; served by WSGI (the test client), it answers and ends at once."""
    response = client.get(path, HTTP_ACCEPT=accept)
    if response.streaming:
        b"".join(response.streaming_content)
    return response


def test_opening_a_stream_counts_in_the_accounts_request_rate(
    rates: Callable[..., None],
    user_factory: Callable[..., User],
    auth_client: Callable[[User], APIClient],
    games: Any,
) -> None:
    """The streams skipped the throttles (they authenticate in their own threads, and only
    the cap on open streams applied): a client could open, close and reopen them without
    end, each opening an authentication and a read of the match. Now each opening counts
    in the account's request rate like any request, and over it is the same 429
    ``throttled``, in JSON, with Retry-After, whichever stream and format."""
    rates(user="4/min")
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = games.person_match(alice, bob)
    match_stream = f"/api/v1/matches/{match.pk}/stream"
    client = auth_client(alice)
    assert client.get(ME).status_code == 200
    assert _open_stream(client, match_stream).status_code == 200
    assert _open_stream(client, "/api/v1/stream", NDJSON).status_code == 200
    assert _open_stream(client, match_stream, NDJSON).status_code == 200
    for path, accept in [(match_stream, SSE), ("/api/v1/stream", SSE), (match_stream, NDJSON)]:
        response = _open_stream(client, path, accept)
        assert not response.streaming
        assert_throttled(response)
    assert_throttled(client.get(ME))  # one budget for the account's requests and streams
    assert _open_stream(auth_client(bob), match_stream).status_code == 200  # per account


def test_a_page_reconnecting_its_streams_stays_well_inside_the_default_rate(
    user_factory: Callable[..., User], auth_client: Callable[[User], APIClient], games: Any
) -> None:
    """EventSource reopens a stream that ended after the stream's ``retry``
    (``LIVE_RETRY_MS``). Served by WSGI every stream ends at once, so a page reopens its
    stream all the time: a minute of that for a match page and a lobby page of one
    account, with the default rates, is all answered and takes a small share of the
    budget, which the page's other requests have besides."""
    from briscola_service import throttling

    rate = throttling.rate_of("user")
    assert rate is not None
    limit, period = rate
    per_minute = 60_000 // django_settings.LIVE_RETRY_MS
    assert period == 60 and 2 * per_minute <= limit // 4, (per_minute, limit)
    alice, bob = user_factory(username="alice"), user_factory(username="bob")
    match = games.person_match(alice, bob)
    client = auth_client(alice)
    for _ in range(per_minute):
        assert _open_stream(client, f"/api/v1/matches/{match.pk}/stream").status_code == 200
        assert _open_stream(client, "/api/v1/stream").status_code == 200
    assert throttling.peek(f"user:u{alice.pk}").hits == 2 * per_minute  # each one counted
    assert client.get(ME).status_code == 200


@pytest.mark.parametrize(
    ("address", "counted_as"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("::ffff:203.0.113.9", "203.0.113.9"),
        ("not an address", "not an address"),
    ],
)
def test_an_ipv6_client_is_counted_by_its_64_block(address: str, counted_as: str) -> None:
    """A host picks any address of the /64 it is given: counted one by one, one client was
    as many addresses as it liked (the outside audit's second look)."""
    from briscola_service.throttling import address_block

    assert address_block(address) == counted_as


def test_two_addresses_of_one_ipv6_block_share_the_per_address_limits(
    rates: Callable[..., None],
) -> None:
    rates(anon="3/min")
    body = {"username": "nobody", "password": "wrong-password"}
    answered = [
        APIClient(REMOTE_ADDR=f"2001:db8:7:7::{n}").post(TOKEN, body, format="json").status_code
        for n in range(1, 6)
    ]
    assert answered == [401, 401, 401, 429, 429]
    other_block = APIClient(REMOTE_ADDR="2001:db8:7:8::1")
    assert other_block.post(TOKEN, body, format="json").status_code == 401
