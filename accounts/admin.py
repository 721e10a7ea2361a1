from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from rest_framework.authtoken.models import TokenProxy

from accounts.models import User
from accounts.ratings import admin as ratings_admin  # noqa: F401  (registers Rating, ...)
from briscola_service.admin import SecretFieldsMixin


@admin.register(User)
class BriscolaUserAdmin(SecretFieldsMixin, UserAdmin):
    # A user's API token (its key is the token's primary key, which Django lets a change
    # list filter by), personal tokens' hashes and the password: never filters.
    secret_fields = ("auth_token", "access_tokens", "password")
    list_display = ("username", "is_bot", "bot_level", "is_staff", "date_joined")
    list_filter = ("is_bot", "bot_level", "is_staff")
    search_fields = ("username",)
    fieldsets = (*(UserAdmin.fieldsets or ()), ("Bot", {"fields": ("is_bot", "bot_level")}))


# REST framework's own token admin lists every account's key in clear (in each row's
# label, as the token's name), which lets anyone with the admin act as any player, and read
# a seat's hand through that player's token, even a staff member who plays in the match.
# The admin lists no tokens: a user revokes their own (POST /api/v1/auth/token/revoke,
# DELETE /api/v1/auth/tokens/<id>), and an administrator stops an account by making it
# inactive, which ends its tokens, sessions and streams at once.
if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)
