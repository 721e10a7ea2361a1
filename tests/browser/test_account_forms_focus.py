"""The sign-in and sign-up pages after an error, in a real headless Chromium: the focus is
in the field to correct (not left on the page's body) and that field's description is the
error, so that a screen reader says it; the sign-in error says what is true of letter case
(the password is case-sensitive, the user name is not: "DORA" signs in as "dora")."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import User
from tests.browser.conftest import DESKTOP, PHONE, axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORDS = {
    "en": {
        "wrong": "Wrong user name or password. The password is case-sensitive; the user "
        "name is not.",
        "required": "This field is required.",
    },
    "it": {
        "wrong": "Nome utente o password errati. La password distingue le maiuscole dalle "
        "minuscole, il nome utente no.",
        "required": "Campo obbligatorio.",
    },
}


def focused(page: Any) -> str:
    return str(page.evaluate("document.activeElement.id || document.activeElement.tagName"))


def description(page: Any, selector: str) -> str:
    """The field's description as aria-describedby makes it: the text of the elements named."""
    return str(
        page.eval_on_selector(
            selector,
            """el => (el.getAttribute('aria-describedby') || '').split(/\\s+/).filter(Boolean)
                 .map((id) => document.getElementById(id).textContent.trim()).join(' ')""",
        )
    )


@pytest.mark.parametrize(
    ("language", "options"), [("en", DESKTOP), ("it", PHONE)], ids=["desktop-en", "phone-it"]
)
def test_a_failed_sign_in_or_sign_up_puts_the_focus_on_what_to_correct(
    chromium: Any,
    live_server: Any,
    people: Callable[..., User],
    shots: Any,
    language: str,
    options: dict[str, Any],
) -> None:
    from playwright.sync_api import expect

    words = WORDS[language]
    people(username="dora")
    context = chromium.new_context(locale=language, **options)
    page = context.new_page()
    page.goto(f"{live_server.url}/play/signin/")
    page.fill("#id_username", "dora")
    page.fill("#id_password", "Wrong-password-1")
    page.click("button.primary")
    page.wait_for_selector(".account-form .error")
    # The focus is in the user name field, whose description is the error; the error is an
    # alert besides. Its words say which field is case-sensitive.
    assert focused(page) == "id_username"
    assert page.inner_text("#form-errors") == words["wrong"]
    assert page.get_attribute("#form-errors", "role") == "alert"
    assert description(page, "#id_username") == words["wrong"]
    expect(page.locator("#id_username")).to_have_accessible_description(words["wrong"])
    assert page.input_value("#id_username") == "dora"
    assert axe_violations(page) == []
    shots(page, "signin-wrong")
    # What the error says is so: the name in capitals signs in.
    page.fill("#id_username", "DORA")
    page.fill("#id_password", "a-long-password-1")
    page.click("button.primary")
    page.wait_for_url(re.compile(r".*/play/$"))
    context.close()

    context = chromium.new_context(locale=language, **options)
    page = context.new_page()
    page.goto(f"{live_server.url}/play/signup/")
    page.click("button.primary")
    page.wait_for_selector(".field-errors")
    assert focused(page) == "id_username"  # the first field in error
    assert description(page, "#id_username") == words["required"]
    expect(page.locator("#id_username")).to_have_accessible_description(words["required"])
    page.fill("#id_username", "carla")
    page.fill("#id_password", "short")
    page.click("button.primary")
    page.wait_for_selector("#id_password-errors")
    assert focused(page) == "id_password"  # the name was fine: the password is to correct
    assert "8" in description(page, "#id_password")
    assert page.input_value("#id_username") == "carla"
    assert axe_violations(page) == []
    shots(page, "signup-short-password", full_page=True)
    context.close()
