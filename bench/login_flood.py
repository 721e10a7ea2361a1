"""Password guessing against the web service: a normal request's latency while anonymous
threads hammer the logins (issue 19, item 4). Prints figures; nothing here asserts on
timing.

    .venv/bin/python bench/login_flood.py [--runs 3] [--threads 6] [--seconds 10]

Each run starts a private deployment in real processes (tests/faults/stack.py: its own
PostgreSQL, redis-server and gunicorn with the uvicorn workers, ``--workers`` of them),
registers one account, then in the same run:

1. ``GET /api/v1/auth/me`` with the account's token, one after another for ``--seconds``
   (the baseline);
2. ``--threads`` anonymous threads (one client address, as one attacker) post wrong
   passwords as fast as they are answered: half to the API's token endpoint, half to the
   browsable API's login form (with its CSRF cookie and token, as a browser); each
   password check costs a PBKDF2 hash. After ``--warmup`` seconds of that (a throttle
   refuses only once its window's first attempts are spent), the same GETs again.

Twice: with the login throttles off (``THROTTLE_LOGIN_IP_RATE``, ``_USER_RATE`` and
``THROTTLE_AUTH_FAILURE_RATE`` none: the forms unthrottled, as before issue 19; the API's
anonymous throttle of 60/min per IP stays, as it was), and with them at their defaults
(20/min per IP, 10/min per user name). Prints the GET's median and p95 in both phases, the
login attempts answered during the second phase, how many were password checks (200 or
401) and how many 429.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.faults.stack import Stack  # noqa: E402

# Plain HTTP here: the CSRF and session cookies must not be Secure-only for the form.
COOKIES = {"CSRF_COOKIE_SECURE": "false", "SESSION_COOKIE_SECURE": "false"}
OFF = {
    **COOKIES,
    "THROTTLE_LOGIN_IP_RATE": "none",
    "THROTTLE_LOGIN_USER_RATE": "none",
    "THROTTLE_AUTH_FAILURE_RATE": "none",
    "THROTTLE_ANON_RATE": "60/min",
}
ON = {
    **COOKIES,
    "THROTTLE_LOGIN_IP_RATE": "20/min",
    "THROTTLE_LOGIN_USER_RATE": "10/min",
    "THROTTLE_AUTH_FAILURE_RATE": "30/min",
    "THROTTLE_ANON_RATE": "60/min",
}


def gets(stack: Stack, token: str, seconds: float) -> list[float]:
    session = requests.Session()
    session.headers["Authorization"] = token
    latencies: list[float] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        response = session.get(stack.base + "/api/v1/auth/me", timeout=60)
        assert response.status_code == 200, response.text
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def attacker(stack: Stack, form: bool, stop: threading.Event, answers: list[int]) -> None:
    session = requests.Session()
    n = 0
    while not stop.is_set():
        n += 1
        try:
            if form:
                page = session.get(stack.base + "/api-auth/login/", timeout=60)
                match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
                token = match.group(1) if match else ""
                response = session.post(
                    stack.base + "/api-auth/login/",
                    data={
                        "username": f"victim{n % 7}",
                        "password": f"guess-{n}",
                        "csrfmiddlewaretoken": token,
                    },
                    headers={"Referer": stack.base + "/api-auth/login/"},
                    timeout=60,
                )
            else:
                response = session.post(
                    stack.base + "/api/v1/auth/token",
                    json={"username": f"victim{n % 7}", "password": f"guess-{n}"},
                    timeout=60,
                )
        except requests.RequestException:
            continue
        answers.append(response.status_code)


def one_run(settings: dict[str, str], args: argparse.Namespace) -> dict[str, float]:
    workdir = Path(tempfile.mkdtemp(prefix="briscola-login-"))
    stack = Stack(workdir, WEB_WORKERS=str(args.workers), **settings)
    try:
        stack.start()
        token = str(stack.register("bench").session.headers["Authorization"])
        gets(stack, token, 1.0)  # warm up
        base = gets(stack, token, args.seconds)
        stop = threading.Event()
        answers: list[int] = []
        threads = [
            threading.Thread(target=attacker, args=(stack, n % 2 == 1, stop, answers))
            for n in range(args.threads)
        ]
        for thread in threads:
            thread.start()
        time.sleep(args.warmup)  # the throttles need their first 20 attempts to refuse
        answered_before = len(answers)
        during = gets(stack, token, args.seconds)
        stop.set()
        for thread in threads:
            thread.join()
    finally:
        stack.close()
    return {
        "base_p50": statistics.median(base),
        "base_p95": statistics.quantiles(base, n=20)[18],
        "flood_p50": statistics.median(during),
        "flood_p95": statistics.quantiles(during, n=20)[18],
        "attempts": float(len(answers) - answered_before),
        "throttled": float(answers[answered_before:].count(429)),
        "checked": float(sum(1 for code in answers[answered_before:] if code in (200, 401))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=20.0, help="each GET phase")
    parser.add_argument(
        "--warmup", type=float, default=20.0, help="flood before its GET phase starts"
    )
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (Compose: 3)")
    args = parser.parse_args()
    print(
        f"login_flood: {os.cpu_count()} cores; gunicorn {args.workers} uvicorn workers; "
        f"{args.threads} attacker threads; GET /api/v1/auth/me for {args.seconds:g} s a phase"
    )
    for label, settings in (("throttles off", OFF), ("throttles on", ON)):
        for n in range(1, args.runs + 1):
            f = one_run(settings, args)
            print(
                f"  {label:13} run {n}: GET p50 {f['base_p50']:6.1f} ms (p95 {f['base_p95']:6.1f})"
                f" alone | p50 {f['flood_p50']:7.1f} ms (p95 {f['flood_p95']:7.1f}) under the "
                f"flood | ratio {f['flood_p50'] / f['base_p50']:5.2f} | during it "
                f"{int(f['attempts'])} login attempts answered: {int(f['checked'])} "
                f"password checks, {int(f['throttled'])} 429",
                flush=True,
            )


if __name__ == "__main__":
    main()
