"""What the table page (/play/<match id>/) costs a browser that has nothing cached.

Starts the service as production does (static files collected, gunicorn with uvicorn
workers, DEBUG off, WhiteNoise serving the files compressed; ``--serve runserver`` for
Django's development server instead), on a scratch SQLite database unless DATABASE_URL
is given, signs a person in, starts a match against the random bot, then loads the table in a fresh
Chromium context (empty cache) several times and counts, up to the moment the table is
interactive (the player's cards are buttons that can be played), the requests made and
the bytes transferred (response headers and bodies as sent). It also times, inside the
page, a card's click to the card shown on the table, and lists the requests started in
between (the target: none but the move itself).

    .venv/bin/python bench/page_weight.py --runs 5

Targets (issue 15): under 150 KB and at most 10 requests before interactive. The figures
are printed, not asserted.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, seconds: float = 30.0) -> None:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)  # noqa: S310 (a local URL)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"the server at {url} did not answer within {seconds:.0f} s")


def setup_match(base_url: str) -> tuple[str, str]:
    """A person signed in (its session key) and a match against the random bot (its id)."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "briscola_service.settings")
    django.setup()
    from django.test import Client

    from accounts.services import user_register
    from games.matches.services import SeatSpec, match_create

    name = f"bench{int(time.time() * 1000) % 10**9}"
    user, _token = user_register(username=name, password="a-long-password-1")
    client = Client()
    client.force_login(user)
    match = match_create(
        creator=user, players=2, format="first_to_3", seats=[SeatSpec("bot", "random")]
    )
    return client.cookies["sessionid"].value, str(match.pk)


def measure(browser: Any, base_url: str, session: str, match_id: str) -> dict[str, Any]:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.add_cookies([{"name": "sessionid", "value": session, "url": base_url}])
    page = context.new_page()
    requests: list[Any] = []
    page.on("requestfinished", lambda request: requests.append(request))
    started = time.perf_counter()
    page.goto(f"{base_url}/play/{match_id}/")
    page.wait_for_selector(
        '#play[data-state="playing"][data-my-turn="1"] #hand button[aria-disabled="false"]',
        timeout=20000,
    )
    interactive_ms = (time.perf_counter() - started) * 1000
    before = list(requests)
    total = 0
    rows = []
    for request in before:
        sizes = request.sizes()
        size = sizes["responseHeadersSize"] + sizes["responseBodySize"]
        total += size
        rows.append((request.method, request.url.replace(base_url, ""), size))
    # A card's click: the card is on the table before any answer; what is requested?
    requests.clear()
    card = page.locator('#hand button[aria-disabled="false"]').first
    code = card.get_attribute("data-card")
    # Timed inside the page: from the click event to the card's element on the table.
    page.evaluate(
        """(code) => {
          window.__bench = {};
          document.addEventListener("click", () => { window.__bench.t0 = performance.now(); },
                                    { capture: true, once: true });
          new MutationObserver((list, observer) => {
            if (document.querySelector('#trick .card[data-card="' + code + '"]')) {
              window.__bench.t1 = performance.now();
              observer.disconnect();
            }
          }).observe(document.getElementById("trick"), { childList: true, subtree: true });
        }""",
        code,
    )
    card.click()
    page.wait_for_selector(f'#trick .card[data-card="{code}"]', timeout=10000)
    shown_ms = page.evaluate("window.__bench.t1 - window.__bench.t0")
    # The requests the page started between the click and the card on the table.
    in_flight = page.evaluate(
        """() => performance.getEntriesByType("resource")
              .filter(e => e.startTime >= window.__bench.t0 && e.startTime <= window.__bench.t1)
              .map(e => new URL(e.name).pathname)"""
    )
    context.close()
    return {
        "requests": len(before),
        "bytes": total,
        "rows": rows,
        "interactive_ms": interactive_ms,
        "card_shown_ms": shown_ms,
        "started_before_card_shown": in_flight,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--serve", choices=["asgi", "runserver"], default="asgi")
    args = parser.parse_args()

    scratch = tempfile.TemporaryDirectory()
    env = dict(os.environ)
    env.pop("REDIS_URL", None)  # bot replies in-process: no worker needed
    env.setdefault("DATABASE_URL", f"sqlite:///{scratch.name}/bench.sqlite3")
    if args.serve == "asgi":
        # As in production (DEBUG off: WhiteNoise serves the collected files compressed),
        # over plain HTTP on this machine.
        env.update(
            DEBUG="false",
            SECRET_KEY=secrets.token_urlsafe(50),
            ALLOWED_HOSTS="127.0.0.1,localhost",
            SECURE_SSL_REDIRECT="false",
            SESSION_COOKIE_SECURE="false",
            CSRF_COOKIE_SECURE="false",
        )
    else:
        env["DEBUG"] = "true"
    os.environ.update(env)
    os.environ.pop("REDIS_URL", None)
    python = sys.executable
    subprocess.run(
        [python, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    if args.serve == "asgi":  # as `make run`
        subprocess.run(
            [python, "manage.py", "collectstatic", "--noinput", "-v", "0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        command = [
            str(Path(python).parent / "gunicorn"),
            "briscola_service.asgi",
            "--worker-class",
            "briscola_service.serving.Worker",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
        ]
    else:
        command = [python, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"]
    server = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(base_url + "/play/signin/")
        sys.path.insert(0, str(ROOT))
        session, match_id = setup_match(base_url)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--headless", "--no-sandbox"]
            )
            results = [measure(browser, base_url, session, match_id) for _ in range(args.runs)]
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
        scratch.cleanup()

    first = results[0]
    print(f"Served by {args.serve} ({'DEBUG off' if args.serve == 'asgi' else 'DEBUG on'}).")
    print("The table page, cold (empty cache), 390x844, until the cards can be played:")
    for method, url, size in first["rows"]:
        print(f"  {method:4} {url:60} {size / 1024:7.1f} KB")

    def spread(key: str, scale: float = 1.0) -> str:
        values = [r[key] / scale for r in results]
        return (
            f"median {statistics.median(values):.1f}, min {min(values):.1f}, "
            f"max {max(values):.1f} (n={len(values)})"
        )

    print(f"requests before interactive: {spread('requests')}  (target: at most 10)")
    print(f"KB transferred before interactive: {spread('bytes', 1024)}  (target: under 150)")
    print(f"ms to interactive: {spread('interactive_ms')}")
    print(f"ms from a card's click to the card on the table: {spread('card_shown_ms')}")
    extra = {tuple(r["started_before_card_shown"]) for r in results}
    print(f"requests started between the click and the card on the table: {sorted(extra)}")


if __name__ == "__main__":
    main()
