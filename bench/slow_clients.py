"""Slow clients against the web service: how long a normal request takes while 20
connections trickle their headers or an announced body (issue 19, item 1). Prints figures;
nothing here asserts on timing.

    .venv/bin/python bench/slow_clients.py [--server asgi|sync|both] [--runs 3] [--workers 3]

Each run starts a private deployment in real processes (tests/faults/stack.py: its own
PostgreSQL cluster, redis-server and gunicorn, throttles off), registers one account, then
in the same run:

1. ``--requests`` normal requests, one after another, each on a new connection:
   ``GET /api/v1/auth/me`` with the account's token (the baseline);
2. opens ``--slow`` connections, half sending a request's headers a line every 0.3 s and
   never ending them, half announcing a 4,000-byte body and sending a byte every 0.3 s;
3. one second later, the same normal requests again while the slow ones trickle (each
   waits at most ``--request-timeout`` seconds; one that gets no answer counts as a
   failure at that time).

``--server sync`` serves the WSGI app with gunicorn's sync workers (what Compose and the
image ran before issue 19); ``asgi``, gunicorn with the uvicorn workers of
briscola_service/serving.py (what they run now). Prints, per run, the baseline's and the
slow phase's median and maximum, their ratio, and the failures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.faults.stack import Process, Stack  # noqa: E402
from tests.faults.test_serving import SlowClients  # noqa: E402


def sync_web(stack: Stack, workers: int) -> Process:
    bindir = Path(sys.executable).parent
    cmd = [
        str(bindir / "gunicorn"),
        "briscola_service.wsgi",
        "--bind",
        f"127.0.0.1:{stack.port}",
        "--workers",
        str(workers),
        "--log-level",
        "warning",
    ]
    return Process("web", cmd, stack.env, stack.workdir)


def timed_requests(stack: Stack, token: str, count: int, timeout: float) -> tuple[list[float], int]:
    """Latencies in ms of ``count`` GETs on fresh connections; failures counted at timeout."""
    latencies: list[float] = []
    failures = 0
    for _ in range(count):
        started = time.perf_counter()
        try:
            response = requests.get(
                stack.base + "/api/v1/auth/me",
                headers={"Authorization": token, "Connection": "close"},
                timeout=timeout,
            )
            ok = response.status_code == 200
        except requests.RequestException:
            ok = False
        elapsed = (time.perf_counter() - started) * 1000
        latencies.append(elapsed if ok else timeout * 1000)
        failures += not ok
    return latencies, failures


def one_run(server: str, args: argparse.Namespace) -> dict[str, float]:
    workdir = Path(tempfile.mkdtemp(prefix="briscola-slow-"))
    stack = Stack(workdir, WEB_WORKERS=str(args.workers))
    if server == "sync":
        stack.web = sync_web(stack, args.workers)
    try:
        stack.start()
        token = str(stack.register("bench").session.headers["Authorization"])
        timed_requests(stack, token, 5, args.request_timeout)  # warm up
        base, base_failures = timed_requests(stack, token, args.requests, args.request_timeout)
        slow = SlowClients(stack, args.slow)
        try:
            time.sleep(1.0)
            count = args.requests if server == "asgi" else args.sync_requests
            during, failures = timed_requests(stack, token, count, args.request_timeout)
        finally:
            slow.close()
    finally:
        stack.close()
    figures = {
        "base_p50_ms": statistics.median(base),
        "base_max_ms": max(base),
        "slow_p50_ms": statistics.median(during),
        "slow_max_ms": max(during),
        "failures": float(failures + base_failures),
    }
    figures["ratio_p50"] = figures["slow_p50_ms"] / figures["base_p50_ms"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", choices=["asgi", "sync", "both"], default="both")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (Compose: 3)")
    parser.add_argument("--slow", type=int, default=20, help="slow connections")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument(
        "--sync-requests", type=int, default=3, help="normal requests in the sync slow phase"
    )
    parser.add_argument("--request-timeout", type=float, default=40.0)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "briscola_service.settings")
    servers = ["sync", "asgi"] if args.server == "both" else [args.server]
    print(
        f"slow_clients: {os.cpu_count()} cores; gunicorn {args.workers} workers; "
        f"{args.slow} slow connections; GET /api/v1/auth/me on fresh connections"
    )
    for server in servers:
        runs = []
        for n in range(1, args.runs + 1):
            f = one_run(server, args)
            runs.append(f)
            print(
                f"  {server:4} run {n}: without {f['base_p50_ms']:7.1f} ms p50 "
                f"({f['base_max_ms']:7.1f} max) | with slow clients {f['slow_p50_ms']:8.1f} ms p50 "
                f"({f['slow_max_ms']:8.1f} max) | ratio {f['ratio_p50']:6.2f} | "
                f"failures {int(f['failures'])}",
                flush=True,
            )
        ratios = [f["ratio_p50"] for f in runs]
        print(
            f"  {server:4} p50 ratio over {len(runs)} runs: {min(ratios):.2f} to {max(ratios):.2f}"
        )


if __name__ == "__main__":
    main()
