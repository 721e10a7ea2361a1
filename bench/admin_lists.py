"""How long the admin's move and deal lists take over a big move log (an outside audit
of the admin: 1.8 s at 480,000 moves).

    .venv/bin/python bench/admin_lists.py [--moves 480000] [--db /tmp/admin-lists.sqlite3]

Fills a scratch SQLite database (made once, bulk_create: a minute or so), then times the
move list, the move list filtered by seat and the deal list, as the admin serves them,
and as they were served before (the models' ordering, SELECT DISTINCT seat, a full count).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--moves", type=int, default=480_000)
    parser.add_argument("--db", default="/tmp/admin-lists.sqlite3")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = f"sqlite:///{args.db}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "briscola_service.settings")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver")
    import django

    django.setup()
    from django.contrib import admin
    from django.core.management import call_command
    from django.test import Client

    from accounts.models import User
    from games.admin import MoveAdmin
    from games.models import Deal, Match, Move
    from games.rules.cards import RANKS, SUITS

    call_command("migrate", verbosity=0)
    root = User.objects.filter(username="root").first()
    if root is None:
        root = User.objects.create_superuser("root", password=None)
    deals = -(-args.moves // 40)
    if Move.objects.count() < args.moves:
        start = time.perf_counter()
        have = Deal.objects.count()
        matches = [
            Match(players=2, format="single", created_by=root, status="finished")
            for _ in range(deals - have)
        ]
        Match.objects.bulk_create(matches, batch_size=2000)
        Deal.objects.bulk_create(
            [
                Deal(match=m, number=1, dealer=0, seed="0" * 64, commitment="0" * 64)
                for m in matches
            ],
            batch_size=2000,
        )
        cards = [f"{r}{s}" for s in SUITS for r in RANKS]
        batch: list[Move] = []
        for deal_id in Deal.objects.order_by("id").values_list("id", flat=True)[have:]:
            batch.extend(Move(deal_id=deal_id, ply=p, seat=p % 2, card=cards[p]) for p in range(40))
            if len(batch) >= 20_000:
                Move.objects.bulk_create(batch)
                batch = []
        if batch:
            Move.objects.bulk_create(batch)
        print(f"filled in {time.perf_counter() - start:.0f} s")
    print(f"{Move.objects.count()} moves, {Deal.objects.count()} deals")

    client = Client()
    client.force_login(root)

    def timed(url: str) -> float:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - start)
            assert response.status_code == 200, response.status_code
        return statistics.median(times)

    urls = ["/admin/games/move/", "/admin/games/move/?seat=1", "/admin/games/deal/"]
    now = {url: timed(url) for url in urls}
    # As before: the models' ordering, the seat filter by SELECT DISTINCT, a full count.
    move_admin = admin.site._registry[Move]
    deal_admin = admin.site._registry[Deal]
    saved = (move_admin.ordering, move_admin.list_filter, deal_admin.ordering)
    move_admin.ordering, move_admin.list_filter, deal_admin.ordering = None, ("seat",), None
    move_admin.show_full_result_count = deal_admin.show_full_result_count = True
    before = {url: timed(url) for url in urls}
    move_admin.ordering, move_admin.list_filter, deal_admin.ordering = saved
    assert isinstance(move_admin, MoveAdmin)
    for url in urls:
        print(f"{url:32} before {before[url] * 1000:7.0f} ms   now {now[url] * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
