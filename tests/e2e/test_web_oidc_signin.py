"""Sign-in with the organization's identity provider in the web app, in a real Chromium against
a real Bunko server and a real OpenID Connect issuer (tests/oidc_issuer.py, driven through its
own sign-in page; tests/e2e/oidc_harness.py).

What it proves: the login page offers "Sign in with <the configured provider>" (in English,
Japanese and Chinese) beside the password form, and no such button without an issuer; a person
who presses it and signs in at the issuer lands in the web app signed in, under their name,
with no token left in the address, and the libraries their groups map to in the header's
switcher with the mapped roles (an editor uploads to Engineering; Handbook says read-only); a
refused sign-in (cancelled at the issuer, a forged state) says why on the login page, as text
even when the message is markup; a token handed to the page by a link (a sign-in this tab did
not start: login CSRF) is ignored.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.e2e.browser import needs_chromium, tab
from tests.e2e.oidc_harness import CLIENT, at_the_issuer
from tests.e2e.rest_harness import serve
from tests.oidc_issuer import oidc_issuer, web_sign_in

pytestmark = [needs_chromium, pytest.mark.filterwarnings("ignore::DeprecationWarning:authlib")]
expect = pytest.importorskip("playwright.sync_api").expect

PROVIDER = "Acme SSO"
GROUP_ROLES = {
    "eng": {"library": "Engineering", "role": "editor"},
    "all": {"library": "Handbook", "role": "viewer"},
}


@pytest.fixture(scope="module")
def issuer_and_server(tmp_path_factory):
    """An issuer, and a Bunko server whose people sign in with it (oidc_harness.signing_in,
    with the button's name configured)."""
    data = tmp_path_factory.mktemp("web-oidc") / "data"
    with (
        oidc_issuer() as issuer,
        serve(data, oidc_issuer=issuer.url, oidc_group_roles=GROUP_ROLES,
              oidc_provider_name=PROVIDER, **CLIENT) as rest,
    ):  # fmt: skip
        yield issuer, rest


def through_the_sign_in(page, issuer, rest) -> None:
    """Let the sign-in's own requests go as they are. The tab fetches each document itself to
    add its CSP, and so would follow Bunko's redirect to the issuer without the browser (whose
    form would then post back to Bunko); the web app's page keeps the CSP its server sends.
    The issuer's page links a stylesheet from the internet: answered empty here."""

    def handle(route) -> None:
        url = route.request.url
        if url.startswith(issuer.url) or url.startswith(rest.url + "/auth/oidc/"):
            route.continue_()
        elif route.request.resource_type == "stylesheet" and not url.startswith(rest.url):
            route.fulfill(status=200, content_type="text/css", body="")
        else:
            route.fallback()

    page.route("**/*", handle)


def provider_button(page):
    return page.get_by_role("link", name=f"Sign in with {PROVIDER}")


def switch_to(page, name: str) -> None:
    picker = page.get_by_role("combobox", name="Library")
    option = picker.locator("option", has_text=name)
    expect(option).to_have_count(1)
    picker.select_option(option.get_attribute("value"))
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Library · {name}")


def test_a_person_signs_in_with_the_provider_into_their_groups_libraries(
    issuer_and_server, chromium, tmp_path
):
    issuer, rest = issuer_and_server
    issuer.set_person("ada-sub", preferred_username="ada", email="ada@example.org",
                      groups=["eng", "all"])  # fmt: skip
    notes = tmp_path / "design-notes.txt"
    notes.write_text("The pump restarts with the red switch.", "utf-8")
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        through_the_sign_in(page, issuer, rest)
        button = provider_button(page)
        expect(button).to_be_visible()
        expect(button).to_have_attribute("href", rest.url + "/auth/oidc/login")  # a plain link
        expect(page.get_by_label("Username")).to_be_visible()  # local accounts keep theirs
        expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible()
        t.shoot("oidc-01-sign-in")
        t.shoot("oidc-01-sign-in", dark=True)

        button.click()
        at_the_issuer(page, "ada-sub")
        expect(page.get_by_role("heading", level=1)).to_have_text("Library")
        expect(page.locator("#top .who")).to_have_text("ada")  # signed in, under their name
        assert page.url == rest.url + "/#/library"  # the token left the address at once
        assert "oidc_token" not in page.evaluate("location.href")
        kept = page.evaluate("JSON.parse(sessionStorage.getItem('bunko.session'))")
        assert set(kept) == {"token", "user"} and kept["user"]["username"] == "ada"
        assert kept["user"]["isAdmin"] is False

        # the header's switcher: their own library and the two their groups map to
        options = page.get_by_role("combobox", name="Library").locator("option")
        expect(options).to_have_count(3)
        assert sorted(options.all_text_contents()) == [
            "Engineering (editor)", "Handbook (viewer)", "My library",
        ]  # fmt: skip

        # an editor of Engineering uploads to it
        switch_to(page, "Engineering")
        page.locator("input[type=file]").set_input_files([str(notes)])
        page.get_by_role("button", name="Upload").click()
        row = page.get_by_role("row").filter(has=page.get_by_role("link", name=notes.name))
        expect(row.get_by_text("completed")).to_be_visible(timeout=60_000)
        t.shoot("oidc-02-library-engineering")

        # a viewer of Handbook reads: the page says so, and offers no upload
        switch_to(page, "Handbook")
        expect(page.get_by_text("You can search and chat over Handbook (viewer)")).to_be_visible()
        expect(page.get_by_role("button", name="Upload")).to_have_count(0)
        t.shoot("oidc-03-library-handbook")
        assert "oidc_token" not in page.url
        assert t.unexpected_errors() == []


def test_the_button_speaks_the_pages_language(issuer_and_server, chromium):
    _, rest = issuer_and_server
    for locale, name in (("ja-JP", f"{PROVIDER} でサインイン"), ("zh-CN", f"使用 {PROVIDER} 登录")):
        with tab(chromium, rest.url + "/", locale=locale) as t:
            expect(t.page.get_by_role("link", name=name)).to_be_visible()
            if locale == "ja-JP":  # the test machine's CJK font is Japanese (make system)
                t.shoot("oidc-01-sign-in-ja")
            assert t.unexpected_errors() == []


def test_a_refused_sign_in_says_why_on_the_login_page(issuer_and_server, chromium):
    issuer, rest = issuer_and_server
    issuer.set_person("eve-sub", preferred_username="eve", groups=["eng"])
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        through_the_sign_in(page, issuer, rest)
        provider_button(page).click()
        page.get_by_role("button", name="Deny").click()  # cancelled at the issuer
        alert = page.get_by_role("alert").filter(has_text="did not work")
        expect(alert).to_have_text(
            "Signing in with your organization's account did not work: "
            "the sign-in was cancelled or refused"
        )
        assert page.url == rest.url + "/#/login" and "oidc_error" not in page.url
        expect(provider_button(page)).to_be_visible()  # to try again
        t.shoot("oidc-04-sign-in-refused")

        # a callback whose state is not this sign-in's (forged): refused, said so
        provider_button(page).click()
        expect(page.get_by_placeholder("sub")).to_be_visible()  # at the issuer
        page.goto(rest.url + "/auth/oidc/callback?code=stolen&state=someone-elses")
        expect(alert).to_contain_text("the sign-in state did not match; try again")
        assert "oidc_error" not in page.url
        assert page.evaluate("sessionStorage.getItem('bunko.session')") is None

        # a message is text, whatever it holds
        provider_button(page).click()
        expect(page.get_by_placeholder("sub")).to_be_visible()
        markup = '<img src=xss-probe onerror="window.__xss=1"><b>bold</b>'
        page.goto(rest.url + "/#oidc_error=" + quote(markup, safe=""))
        expect(alert).to_have_text(
            f"Signing in with your organization's account did not work: {markup}"
        )
        assert page.locator("#main img, #main b").count() == 0
        assert page.evaluate("window.__xss") is None

        # a password sign-in afterwards clears the message; local accounts still sign in
        page.get_by_label("Username").fill("nobody")
        page.get_by_label("Password").fill("not-the-password")
        page.get_by_role("button", name="Sign in", exact=True).click()
        expect(page.get_by_role("alert")).to_have_text("invalid username or password")
        expect(alert).to_have_count(0)
        local = rest.new_user()
        page.get_by_label("Username").fill(local.username)
        page.get_by_label("Password").fill(local.password)
        page.get_by_role("button", name="Sign in", exact=True).click()
        expect(page.locator("#top .who")).to_have_text(local.username)
        assert t.unexpected_errors(r"status of 401") == []


def test_a_token_this_tab_did_not_ask_for_is_ignored(issuer_and_server, chromium):
    issuer, rest = issuer_and_server
    # the attacker's own sign-in, finished outside the victim's browser
    issuer.set_person("mallory-sub", preferred_username="mallory")
    token = web_sign_in(rest.url, "mallory-sub")["oidc_token"]
    with tab(chromium, "about:blank") as t:  # the victim follows a link to the web app
        page = t.page
        page.goto(f"{rest.url}/#oidc_token={token}")
        expect(page.get_by_role("alert")).to_have_text(
            "A sign-in that this page did not start was ignored. Sign in again here."
        )
        assert page.url == rest.url + "/#/login"
        assert page.evaluate("sessionStorage.getItem('bunko.session')") is None
        expect(page.locator("#top")).to_be_hidden()
        t.shoot("oidc-05-sign-in-not-started")
        assert t.unexpected_errors() == []


def test_without_an_issuer_there_is_no_button(chromium, tmp_path):
    with serve(tmp_path / "data") as rest, tab(chromium, rest.url + "/") as t:
        page = t.page
        expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible()
        offered = page.evaluate(
            "import('/static/js/pages/login.js').then((m) => m.oidc.settings())"
        )
        assert offered == {"enabled": False}  # what the login page was told
        expect(page.get_by_role("link", name="Sign in with")).to_have_count(0)
        expect(page.locator(".provider")).to_be_hidden()
        assert t.unexpected_errors() == []


def test_signing_out_ends_the_session_at_the_provider_and_comes_back(issuer_and_server, chromium):
    """Issue 47, point 9: after Bunko's own sign-out the browser goes to the issuer's
    end-session page (its end_session_endpoint, with this client and the web app to come back
    to), and from there back to the web app's sign-in."""
    issuer, rest = issuer_and_server
    issuer.set_person("ines-sub", preferred_username="ines")
    with tab(chromium, rest.url + "/") as t:
        page = t.page
        through_the_sign_in(page, issuer, rest)
        provider_button(page).click()
        at_the_issuer(page, "ines-sub")
        expect(page.locator("#top .who")).to_have_text("ines")
        token = page.evaluate("JSON.parse(sessionStorage.getItem('bunko.session')).token")

        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("heading", name="End Session")).to_be_visible()  # the issuer's
        assert page.url.startswith(issuer.metadata()["end_session_endpoint"] + "?")
        assert "post_logout_redirect_uri=" + quote(rest.url + "/", safe="") in page.url
        assert page.evaluate("sessionStorage.getItem('bunko.session')") is None
        page.get_by_role("button", name="End session").click()
        expect(provider_button(page)).to_be_visible()  # back at the web app's sign-in
        assert page.url.startswith(rest.url + "/")
        with rest.client(token) as client:  # Bunko's own sign-out came first
            assert client.get("/auth/me").status_code == 401
        assert t.unexpected_errors(r"status of 401") == []
