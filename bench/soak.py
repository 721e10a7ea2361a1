"""A soak: mixed play for a long, bounded time, watching memory and latency drift.

    .venv/bin/python bench/soak.py [--minutes 30] [--window-minutes 5] [--clients 8]

Starts the service as bench/load.py does (a scratch PostgreSQL database ``briscola_load_soak``,
gunicorn, a Celery worker, Redis database 13, all on 127.0.0.1) and plays in windows of
``--window-minutes``: in each, half the clients play person-vs-person matches in pairs and
half play against the greedy bot (bench/load.py's clients and phases), at half the load
bench/load.py drives (8 clients against its 16 that never pause). After every window it
records each process's resident memory (the web tier's processes together, the worker's
together, from /proc) and the window's move latency p99. At the end it checks the move
log (every acknowledged move stored, no ply twice) and prints, against the targets:
0 errors, 0 lost moves, memory growth after the first window < 10% for every process
group, and the last window's p99 no more than 20% above the first's (faster is not a
failure). Exit status 0 when met.
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


def rss_kib(root_pid: int) -> int:
    """Resident memory of a process and its descendants, in KiB (from /proc)."""
    total = 0
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
                total += int(line.split()[1])
        pids.extend(int(c) for c in children)
    return total


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
    args = parser.parse_args(argv)
    windows = max(2, round(args.minutes / args.window_minutes))
    db = "briscola_load_soak"
    database_url = f"postgres://postgres@127.0.0.1:5432/{db}"
    port = load.free_port()
    base = f"http://127.0.0.1:{port}"
    env = load.service_env(database_url, "redis://127.0.0.1:6379/13")
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
            [load.venv_bin("gunicorn"), "briscola_service.wsgi", "--bind", f"127.0.0.1:{port}"]
            + ["--workers", str(args.workers), "--log-level", "warning"],
            env,
        )
        worker = procs.start(
            "celery",
            [load.venv_bin("celery"), "-A", "briscola_service", "worker", "-l", "warning"]
            + ["--concurrency", "2", "-n", f"soak-{os.getpid()}@%h"],
            env,
        )
        load.wait_http(base, procs, web, 30)
        if not load.wait_celery(env, 45):
            raise SystemExit(f"soak: the worker did not answer:\n{procs.log_tail('celery')}")
        users = load.register(base, args.clients * 2, f"soak{secrets.token_hex(2)}u")
        print(f"soak: {windows} windows of {args.window_minutes} min, {args.clients} clients")
        rows = []
        acknowledged: list[tuple[str, int, str]] = []
        errors = 0
        for number in range(1, windows + 1):
            stats = window(base, users, args.clients, args.window_minutes * 60)
            acknowledged += stats.acknowledged
            errors += stats.errors
            row = {
                "window": number,
                "moves": stats.moves_ok,
                "p99_ms": 1000 * (load.percentile(stats.move_latencies, 0.99) or 0),
                "web_kib": rss_kib(web.pid),
                "worker_kib": rss_kib(worker.pid),
                "errors": stats.errors,
            }
            rows.append(row)
            print(
                f"soak: window {number}: {row['moves']} moves, p99 {row['p99_ms']:.1f} ms, "
                f"web {row['web_kib'] / 1024:.1f} MiB, worker {row['worker_kib'] / 1024:.1f} MiB, "
                f"{row['errors']} errors",
                flush=True,
            )
        log = load.check_log(database_url, acknowledged)
        first, last = rows[0], rows[-1]
        growth = {
            group: (last[f"{group}_kib"] - first[f"{group}_kib"]) / first[f"{group}_kib"]
            for group in ("web", "worker")
        }
        drift = last["p99_ms"] / first["p99_ms"] - 1 if first["p99_ms"] else 0.0
        lost = log["lost"]
        checks = [
            ("errors", errors, errors == 0),
            ("lost moves", lost, lost == 0),
            ("web memory growth after window 1", f"{growth['web']:+.1%}", growth["web"] < 0.10),
            (
                "worker memory growth after window 1",
                f"{growth['worker']:+.1%}",
                growth["worker"] < 0.10,
            ),
            ("p99 last window vs first (no worse than +20%)", f"{drift:+.1%}", drift <= 0.20),
        ]
        for name, value, met in checks:
            print(f"  {name:<38} {value!s:>10}   {'met' if met else 'NOT MET'}")
        return 0 if all(met for _, _, met in checks) else 1
    finally:
        procs.stop()
        load.drop_database(db)


if __name__ == "__main__":
    sys.exit(main())
