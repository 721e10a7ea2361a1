"""Matches that existed before the clocks: who is to move and by when (games.clocks).

Active matches get the columns a move would have written (the seat to move from a replay
of the current deal; a bot's turn marked for the bot sweep, a person's given the idle
limit, as untimed matches have); waiting matches an expiry. Nothing else changes.
"""

from datetime import timedelta

from django.conf import settings
from django.db import migrations
from django.utils import timezone


def backfill(apps, schema_editor):
    from games import rules

    Match = apps.get_model("games", "Match")
    Deal = apps.get_model("games", "Deal")
    Move = apps.get_model("games", "Move")
    Seat = apps.get_model("games", "Seat")
    now = timezone.now()
    Match.objects.filter(status="waiting", expires_at__isnull=True).update(
        expires_at=now + timedelta(hours=settings.INVITATION_EXPIRY_HOURS)
    )
    for match in Match.objects.filter(status="active", to_move_seat__isnull=True).iterator():
        deal = Deal.objects.filter(match=match, status="active").order_by("-number").first()
        if deal is None:
            continue
        moves = list(Move.objects.filter(deal=deal).order_by("ply").values_list("card", flat=True))
        state = rules.replay_moves(match.players, deal.dealer, rules.shuffled_deck(deal.seed), moves)
        if state.turn is None:
            continue
        seat = Seat.objects.select_related("user").get(match=match, number=state.turn)
        fields = {"to_move_deal": deal.pk, "to_move_ply": state.ply, "to_move_seat": state.turn}
        if seat.user is not None and seat.user.is_bot:
            fields["bot_to_move_since"] = now
        else:
            fields["deadline"] = now + timedelta(hours=settings.MATCH_IDLE_HOURS)
        Match.objects.filter(pk=match.pk).update(**fields)


class Migration(migrations.Migration):
    dependencies = [("games", "0003_clocks")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
