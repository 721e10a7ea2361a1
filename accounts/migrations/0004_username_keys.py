"""User names: unique in any letter case (a functional unique index on LOWER(username)),
and unique by skeleton (``username_key``, see accounts.usernames).

Existing accounts get their skeleton here, the oldest first; a later account whose
skeleton an older one holds already keeps none (NULL: it goes on working, and gets one if
renamed), and is named in the migration's output. Two existing accounts whose names differ
only in letter case stop the migration with their names: rename one first (they could
only have come from the race this migration closes).
"""

from django.db import migrations, models
from django.db.models.functions import Lower

from accounts.usernames import username_skeleton


def keys_forward(apps, schema_editor):  # type: ignore[no-untyped-def]
    User = apps.get_model("accounts", "User")
    by_lower: dict[str, list[str]] = {}
    for name in User.objects.order_by("id").values_list("username", flat=True):
        by_lower.setdefault(name.lower(), []).append(name)
    clashes = [names for names in by_lower.values() if len(names) > 1]
    if clashes:
        raise RuntimeError(
            "accounts whose names differ only in letter case; rename all but one of each "
            f"before migrating: {clashes}"
        )
    taken: dict[str, str] = {}
    for pk, name in User.objects.order_by("id").values_list("id", "username"):
        key = username_skeleton(name)
        if key in taken:
            print(f"\n  account {name!r} looks like {taken[key]!r}: kept without a skeleton")
            continue
        taken[key] = name
        User.objects.filter(pk=pk).update(username_key=key)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_personal_tokens_and_third_party_bots"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.AddField(
            model_name="user",
            name="username_key",
            field=models.CharField(
                blank=True, editable=False, max_length=300, null=True, unique=True
            ),
        ),
        migrations.RunPython(keys_forward, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="user",
            constraint=models.UniqueConstraint(
                Lower("username"), name="accounts_user_username_lower_uniq"
            ),
        ),
    ]
