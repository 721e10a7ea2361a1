"""A soak: mixed play for a long, bounded time, watching memory and latency drift.

    .venv/bin/python bench/soak.py [--minutes 30] [--window-minutes 5] [--clients 8]
        [--worker-class asgi] [--db briscola_load_soak] [--redis-url redis://127.0.0.1:6379/13]

Starts the service as bench/load.py does (a scratch PostgreSQL database, ``briscola_load_soak``
by default; Redis database 13 by default; all on 127.0.0.1), as production runs it: gunicorn
with the uvicorn workers of the Dockerfile (``--worker-class asgi``, the default; ``sync`` to
compare with older runs), a Celery worker and one beat. It plays in windows of
``--window-minutes``: in each, half the clients play person-vs-person matches in pairs and half
play against the greedy bot (bench/load.py's clients and phases), at half the load bench/load.py
drives (8 clients against its 16 that never pause). After every window it records the resident
memory of every process (each gunicorn and Celery process, and the beat, from /proc) and the
window's move latency p50 and p99. At the end it checks the move log (every acknowledged move
stored, no ply twice) and prints, against the targets: 0 errors, 0 lost moves, the memory of
every process (and of each group together) grown by less than 10% since the first window, and
the last window's p99 no more than 20% above the first's (faster is not a failure). Exit status
0 when met.

Before 2026-12-01 the "p99" printed was the 1st percentile (``load.percentile`` takes percent,
it was given 0.99), and the web tier ran sync workers without a beat: figures from then are not
comparable.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load  # noqa: E402  (bench/load.py: its processes, clients and phases)
from _common import gunicorn_cmd  # noqa: E402


def rss_kib(root_pid: int) -> int:
    """Resident memory of a process and its descendants, in KiB (from /proc)."""
    return sum(processes(root_pid).values())


def processes(root_pid: int) -> dict[int, int]:
    """Each process of the tree rooted at ``root_pid``: its resident memory in KiB."""
    found: dict[int, int] = {}
    pids = [root_pid]
    while pids:
        pid = pids.pop()
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                found[pid] = int(line.split()[1])
        pids.extend(int(c) for c in children)
    return found


def window(base: str, users: list[tuple[str, str]], clients: int, seconds: float) -> Any:
    """One window of mixed play; returns its stats (pvp and bot moves pooled)."""
    half = max(2, clients // 2 // 2 * 2)
    bot_stats = load.Stats()
    bot_users = users[half : half + clients - half]
    bots = threading.Thread(
        target=load.bot_phase, args=(base, bot_users, clients - half, seconds, bot_stats, 0.05)
    )
    bots.start()
    pvp_stats, _ = load.pvp_phase(base, users[:half], half, seconds, 0, 0.05)
    bots.join(seconds + 60)
    for name in ("move_latencies", "acknowledged", "error_samples"):
        getattr(pvp_stats, name).extend(getattr(bot_stats, name))
    pvp_stats.errors += bot_stats.errors
    pvp_stats.moves_ok += bot_stats.moves_ok
    return pvp_stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--window-minutes", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1)
    # asgi: the uvicorn workers the Dockerfile and Compose run (briscola_service.serving).
    parser.add_argument("--worker-class", choices=["sync", "asgi"], default="asgi")
    parser.add_argument(
        "--db", default="briscola_load_soak", help="scratch database (briscola_load*)"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    args = parser.parse_args(argv)
    if not args.db.startswith("briscola_load") or not args.db.replace("_", "").isalnum():
        parser.error(f"refusing database {args.db!r}: the scratch name must start briscola_load")
    if not args.redis_url.startswith(("redis://127.0.0.1", "redis://localhost")):
        parser.error("the soak runs on loopback only: give a redis://127.0.0.1 URL")
    windows = max(2, round(args.minutes / args.window_minutes))
    db = args.db
    database_url = f"postgres://postgres@127.0.0.1:5432/{db}"
    port = load.free_port()
    base = f"http://127.0.0.1:{port}"
    asgi = args.worker_class == "asgi"
    # As bench/load.py: under ASGI each request has a thread of its own, none is kept.
    env = load.service_env(
        database_url, args.redis_url, DATABASE_CONN_MAX_AGE="0" if asgi else "60"
    )
    logdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"briscola-soak-{os.getpid()}"
    logdir.mkdir(parents=True, exist_ok=True)
    procs = load.Procs(logdir)
    try:
        if load.database_exists(db):
            load.drop_database(db)
        load.run(["createdb", *load.PG, db])
        load.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], env=env)
        load.run([sys.executable, "manage.py", "ensure_bots"], env=env)
        web = procs.start(
            "web",
            gunicorn_cmd(port, args.workers, asgi),
            env,
        )
        celery = [load.venv_bin("celery"), "-A", "briscola_service"]
        worker = procs.start(
            "celery",
            [*celery, "worker", "-l", "warning", "--concurrency", "2"]
            + ["-n", f"soak-{os.getpid()}@%h"],
            env,
        )
        beat = procs.start(
            "beat",
            [*celery, "beat", "-l", "warning", "--schedule", str(logdir / "beat-schedule")],
            env,
        )
        groups = {"web": web.pid, "worker": worker.pid, "beat": beat.pid}
        load.wait_http(base, procs, web, 30)
        if not load.wait_celery(env, 45):
            raise SystemExit(f"soak: the worker did not answer:\n{procs.log_tail('celery')}")
        users = load.register(base, args.clients * 2, f"soak{secrets.token_hex(2)}u")
        print(
            f"soak: {windows} windows of {args.window_minutes} min, {args.clients} clients; "
            f"gunicorn {args.workers} {args.worker_class} workers, a Celery worker "
            f"(concurrency 2), one beat; the clients share the machine's "
            f"{os.cpu_count()} cores with the server",
            flush=True,
        )
        rows = []
        memory: list[dict[tuple[str, int], int]] = []  # per window: (group, pid) -> KiB
        acknowledged: list[tuple[str, int, str]] = []
        errors = 0
        for number in range(1, windows + 1):
            stats = window(base, users, args.clients, args.window_minutes * 60)
            acknowledged += stats.acknowledged
            errors += stats.errors
            memory.append(
                {
                    (group, pid): kib
                    for group, root in groups.items()
                    for pid, kib in processes(root).items()
                }
            )
            row = {
                "window": number,
                "moves": stats.moves_ok,
                "p99_ms": 1000 * (load.percentile(stats.move_latencies, 99) or 0),
                "p50_ms": 1000 * (load.percentile(stats.move_latencies, 50) or 0),
                "errors": stats.errors,
                **{
                    f"{group}_kib": sum(k for (g, _), k in memory[-1].items() if g == group)
                    for group in groups
                },
            }
            rows.append(row)
            print(
                f"soak: window {number}: {row['moves']} moves "
                f"({row['moves'] / (args.window_minutes * 60):.1f}/s), "
                f"p50 {row['p50_ms']:.1f} ms, p99 {row['p99_ms']:.1f} ms, "
                f"web {row['web_kib'] / 1024:.1f} MiB, worker {row['worker_kib'] / 1024:.1f} MiB, "
                f"beat {row['beat_kib'] / 1024:.1f} MiB, {row['errors']} errors",
                flush=True,
            )
            for sample in stats.error_samples[:3]:
                print(f"    {sample}", flush=True)
        log = load.check_log(database_url, acknowledged)
        first, last = rows[0], rows[-1]
        print("soak: resident memory of each process, after window 1 and at the end:")
        growth: dict[str, float] = {}
        for key in sorted(set(memory[0]) | set(memory[-1])):
            group, pid = key
            before, after = memory[0].get(key), memory[-1].get(key)
            if before is None or after is None:
                print(f"  {group:<7} pid {pid:<8} {'gone' if after is None else 'new'}")
                growth[f"{group} {pid}"] = float("inf")
                continue
            growth[f"{group} {pid}"] = (after - before) / before
            print(
                f"  {group:<7} pid {pid:<8} {before / 1024:7.1f} MiB -> {after / 1024:7.1f} MiB"
                f"  {(after - before) / before:+.1%}"
            )
        drift = last["p99_ms"] / first["p99_ms"] - 1 if first["p99_ms"] else 0.0
        lost = log["lost"] + log["finished_deals_bad"] + log["other_deals_bad"]
        worst = max(growth, key=lambda k: growth[k])
        by_group = {
            group: (last[f"{group}_kib"] - first[f"{group}_kib"]) / first[f"{group}_kib"]
            for group in groups
        }
        checks = [
            ("errors", errors, errors == 0),
            ("lost moves", lost, lost == 0),
            (
                f"worst process memory growth ({worst})",
                f"{growth[worst]:+.1%}",
                growth[worst] < 0.10,
            ),
            *(
                (f"{group} memory growth after window 1", f"{change:+.1%}", change < 0.10)
                for group, change in by_group.items()
            ),
            ("p99 last window vs first (no worse than +20%)", f"{drift:+.1%}", drift <= 0.20),
        ]
        print(
            f"soak: {len(acknowledged)} moves acknowledged, {log['moves_in_log']} in the log, "
            f"{log['finished_deals']} finished deals checked"
        )
        for name, value, met in checks:
            print(f"  {name:<46} {value!s:>10}   {'met' if met else 'NOT MET'}")
        return 0 if all(met for _, _, met in checks) else 1
    finally:
        procs.stop()
        load.drop_database(db)


if __name__ == "__main__":
    sys.exit(main())
