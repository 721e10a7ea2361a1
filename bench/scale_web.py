"""Moves/s with one web instance and with two behind one address, in the same run.

    .venv/bin/python bench/scale_web.py [--runs 3] [--seconds 30] [--clients 16]
        [--bot-clients 4] [--workers 3] [--worker-class asgi] [--db briscola_load_scale]
        [--redis-url redis://127.0.0.1:6379/13]

Scaling the web tier out is configuration: another instance on the same PostgreSQL and
Redis. This starts, on 127.0.0.1 only, one scratch database (created afresh, migrated, the
bots made; dropped at the end), one Celery worker (concurrency 2) and TWO web instances,
each its own gunicorn with ``--workers`` workers (3 of the Dockerfile's ASGI workers by
default) on its own port. Then, ``--runs`` times, it plays ``--seconds`` with bench/load.py's
clients (``--clients`` people in pairs against each other, ``--bot-clients`` against the
greedy bot through the worker, at once), first against one instance and then against both,
or the other way round (the order alternates from run to run: this machine's speed drifts).

One address: nginx is not installed on this machine, and a proxy written in Python would
take its CPU from the same two cores and add a hop to both cases. So the clients do what
nginx's default upstream does: every request goes to the next instance in turn (round-robin
per request, no stickiness; bench/load.py's ``Client`` with a comma-separated ``base``).
A player's move and its next poll land on different instances, which is the harshest test
of a stateless tier (the ETag one instance gave is sent to the other). In the "one" phase
the second instance runs idle.

Prints for each phase: moves/s (all moves) and person-vs-person moves/s, the move latency
p50/p99, errors, the machine's CPU busy (all of it: /proc/stat, other users included), the
cores the web instances used, and their CPU per move (their processes' utime + stime from
/proc, the clients' polls included), split by instance; then each run's ratio two/one and the
median and spread of the runs; finally the move log check over every phase (every acknowledged
move stored, no ply twice). Everything shares the machine's cores with the clients (and, here,
with other people's work): the absolute figures are a floor, the ratio within a run is the
figure to compare. On one machine, two instances add processes, not cores: no speed-up is
expected.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import statistics
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load  # noqa: E402  (bench/load.py: its processes, clients and phases)
from _common import gunicorn_cmd  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(root_pid: int) -> float:
    """utime + stime of a process and its live descendants, in seconds (from /proc)."""
    total = 0
    pids = [root_pid]
    while pids:
        pid = pids.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
        pids.extend(int(c) for c in children)
    return total / TICKS


def machine_busy() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine so far."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return sum(values) - idle, sum(values)


def phase(
    bases: list[str], users: list[tuple[str, str]], args: argparse.Namespace, pids: list[int]
) -> dict[str, Any]:
    """One measuring phase against ``bases`` (round-robin per request)."""
    base = ",".join(bases)
    poll = args.poll_ms / 1000
    bot_stats = load.Stats()
    bot_users = users[args.clients : args.clients + args.bot_clients]
    cpu_before = [tree_cpu_seconds(pid) for pid in pids]
    busy_before = machine_busy()
    bots = threading.Thread(
        target=load.bot_phase,
        args=(base, bot_users, args.bot_clients, args.seconds, bot_stats, poll),
    )
    bots.start()
    stats, seconds = load.pvp_phase(
        base, users[: args.clients], args.clients, args.seconds, 0, poll
    )
    bots.join(args.seconds + 60)
    busy_after = machine_busy()
    cpu = [tree_cpu_seconds(pid) - before for pid, before in zip(pids, cpu_before, strict=True)]
    moves = stats.moves_ok + bot_stats.moves_ok
    latencies = stats.move_latencies + bot_stats.move_latencies
    return {
        "instances": len(bases),
        "seconds": seconds,
        "moves": moves,
        "moves_per_s": moves / seconds,
        "pvp_moves_per_s": stats.moves_ok / seconds,
        "p50_ms": 1000 * (load.percentile(latencies, 50) or 0),
        "p99_ms": 1000 * (load.percentile(latencies, 99) or 0),
        "errors": stats.errors + bot_stats.errors,
        "error_samples": stats.error_samples + bot_stats.error_samples,
        "acknowledged": stats.acknowledged + bot_stats.acknowledged,
        "busy": (busy_after[0] - busy_before[0]) / max(1, busy_after[1] - busy_before[1]),
        "web_cpu_ms_per_move": [1000 * c / max(1, moves) for c in cpu],
        "web_cores": sum(cpu) / seconds,
    }


def describe(result: dict[str, Any]) -> str:
    cpu = result["web_cpu_ms_per_move"]
    split = " + ".join(f"{c:.1f}" for c in cpu)
    return (
        f"{result['moves_per_s']:6.1f} moves/s ({result['pvp_moves_per_s']:.1f} person-vs-person), "
        f"p50 {result['p50_ms']:.0f} ms, p99 {result['p99_ms']:.0f} ms, "
        f"{result['errors']} errors, machine CPU {result['busy']:.0%} busy "
        f"(the web instances used {result['web_cores']:.2f} of its {os.cpu_count()} cores), "
        f"web CPU {sum(cpu):.1f} ms/move (instance A + B: {split})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=30.0, help="each phase")
    parser.add_argument("--clients", type=int, default=16, help="people in pairs (even)")
    parser.add_argument("--bot-clients", type=int, default=4)
    parser.add_argument("--poll-ms", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers per instance")
    parser.add_argument("--worker-class", choices=["sync", "asgi"], default="asgi")
    parser.add_argument("--db", default="briscola_load_scale", help="scratch (briscola_load*)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    args = parser.parse_args(argv)
    if not args.db.startswith("briscola_load") or not args.db.replace("_", "").isalnum():
        parser.error(f"refusing database {args.db!r}: the scratch name must start briscola_load")
    if args.clients < 2 or args.clients % 2:
        parser.error("--clients must be even and at least 2 (players come in pairs)")
    if not args.redis_url.startswith(("redis://127.0.0.1", "redis://localhost")):
        parser.error("--redis-url must be on the loopback")
    timeout = 240 + args.runs * 2 * (args.seconds + 60)

    def on_alarm(signum: int, frame: Any) -> None:
        raise load.GlobalTimeout(f"global timeout of {timeout:.0f}s")

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(timeout))

    database_url = f"postgres://postgres@127.0.0.1:5432/{args.db}"
    asgi = args.worker_class == "asgi"
    env = load.service_env(
        database_url, args.redis_url, DATABASE_CONN_MAX_AGE="0" if asgi else "60"
    )
    logdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"briscola-scale-{os.getpid()}"
    logdir.mkdir(parents=True, exist_ok=True)
    procs = load.Procs(logdir)
    created = False
    try:
        if load.database_exists(args.db):
            load.drop_database(args.db)
        load.run(["createdb", *load.PG, args.db])
        created = True
        load.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], env=env)
        load.run([sys.executable, "manage.py", "ensure_bots"], env=env)
        bases, webs = [], []
        for name in ("A", "B"):
            port = load.free_port()
            bases.append(f"http://127.0.0.1:{port}")
            webs.append(
                procs.start(
                    f"web{name}",
                    gunicorn_cmd(port, args.workers, asgi),
                    env,
                )
            )
        procs.start(
            "celery",
            [load.venv_bin("celery"), "-A", "briscola_service", "worker", "-l", "warning"]
            + ["--concurrency", "2", "-n", f"scale-{os.getpid()}@%h"],
            env,
        )
        for base, web in zip(bases, webs, strict=True):
            load.wait_http(base, procs, web, 30)
        if not load.wait_celery(env, 45):
            raise SystemExit(f"scale_web: the worker did not answer:\n{procs.log_tail('celery')}")
        users = load.register(
            bases[0], args.clients + args.bot_clients, f"sc{secrets.token_hex(2)}u"
        )
        print(
            f"scale_web: {os.cpu_count()} cores shared by everything (PostgreSQL, Redis, the "
            f"Celery worker, the web instances, these clients, and other people's work); "
            f"each instance: gunicorn {args.workers} {args.worker_class} workers; "
            f"{args.clients} person-vs-person clients + {args.bot_clients} against the greedy "
            f"bot, {args.seconds:.0f} s a phase, polls every {args.poll_ms:.0f} ms",
            flush=True,
        )
        load.trivial_get(",".join(bases), users, args.clients, 2.0)  # warm both up
        pids = [web.pid for web in webs]
        acknowledged: list[tuple[str, int, str]] = []
        errors = 0
        runs: list[dict[int, dict[str, Any]]] = []
        for number in range(1, args.runs + 1):
            order = [1, 2] if number % 2 else [2, 1]
            run: dict[int, dict[str, Any]] = {}
            for count in order:
                result = phase(bases[:count], users, args, pids)
                run[count] = result
                acknowledged += result["acknowledged"]
                errors += result["errors"]
                label = "one instance " if count == 1 else "two instances"
                print(f"scale_web: run {number}, {label}: {describe(result)}", flush=True)
                for sample in result["error_samples"][:3]:
                    print(f"    {sample}", flush=True)
            runs.append(run)
            ratio = run[2]["moves_per_s"] / run[1]["moves_per_s"]
            print(f"scale_web: run {number}: two / one = {ratio:.2f}", flush=True)
        log = load.check_log(database_url, acknowledged)
        lost = log["lost"] + log["finished_deals_bad"] + log["other_deals_bad"]

        def spread(values: list[float], unit: str = "") -> str:
            return (
                f"median {statistics.median(values):.2f}{unit} "
                f"(min {min(values):.2f}, max {max(values):.2f}; {len(values)} runs)"
            )

        print()
        print(f"  moves/s, one instance    {spread([r[1]['moves_per_s'] for r in runs])}")
        print(f"  moves/s, two instances   {spread([r[2]['moves_per_s'] for r in runs])}")
        print(
            "  two / one, per run       "
            + spread([r[2]["moves_per_s"] / r[1]["moves_per_s"] for r in runs])
        )
        print(
            "  web CPU per move, one    "
            + spread([sum(r[1]["web_cpu_ms_per_move"]) for r in runs], " ms")
        )
        print(
            "  web CPU per move, two    "
            + spread([sum(r[2]["web_cpu_ms_per_move"]) for r in runs], " ms")
        )
        print(
            f"  errors {errors}; lost moves {lost} ({len(acknowledged)} acknowledged, "
            f"{log['moves_in_log']} in the log, {log['finished_deals']} finished deals checked)"
        )
        return 0 if errors == 0 and lost == 0 else 1
    except load.GlobalTimeout as exc:
        print(f"scale_web: {exc}", file=sys.stderr)
        return 2
    finally:
        signal.alarm(0)
        procs.stop()
        if created:
            load.drop_database(args.db)


if __name__ == "__main__":
    sys.exit(main())
