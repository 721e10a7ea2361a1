from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from accounts.models import User
from accounts.ratings import admin as ratings_admin  # noqa: F401  (registers Rating, ...)


@admin.register(User)
class BriscolaUserAdmin(UserAdmin):
    list_display = ("username", "is_bot", "bot_level", "is_staff", "date_joined")
    list_filter = ("is_bot", "bot_level", "is_staff")
    search_fields = ("username",)
    fieldsets = (*(UserAdmin.fieldsets or ()), ("Bot", {"fields": ("is_bot", "bot_level")}))
