"""The web app in Japanese and Chinese, in Chromium. Issue 49, point 8: bold Japanese and
Chinese file names render bold; and a refusal names every readable type in the page's language.

The test machine's only CJK font (IPAexGothic, as on many Linux desktops) has no bold face;
the names must still come out heavier than the same text at the regular weight. Measured as
ink: the dark pixels of the element's screenshot, bold against the same element set to 400
(a ratio, so the font's size does not matter): 1.14 with the names at 600, 1.84 at 700."""

from __future__ import annotations

import io

import pytest

from tests.e2e.browser import PHONE, needs_chromium, tab
from tests.e2e.rest_harness import wait_until_done
from tests.fixtures_files import needs_cjk_font

pytestmark = [needs_chromium, needs_cjk_font]
expect = pytest.importorskip("playwright.sync_api").expect
Image = pytest.importorskip("PIL.Image")

NAMES = ["就業規則の改定案.txt", "中文文件名称.txt"]  # Japanese; Chinese in glyphs the font has


def ink(png: bytes) -> int:
    """How many pixels are darker than mid-grey: the strokes of the text."""
    grey = Image.open(io.BytesIO(png)).convert("L")
    return sum(1 for value in grey.getdata() if value < 128)


def bold_over_regular(locator) -> float:
    bold = ink(locator.screenshot())
    locator.evaluate("(el) => { el.style.fontWeight = '400'; }")
    regular = ink(locator.screenshot())
    locator.evaluate("(el) => { el.style.fontWeight = ''; }")
    return bold / max(regular, 1)


def test_bold_cjk_file_names_render_bold(rest, chromium):
    user = rest.new_user()
    for name in NAMES:
        sent = user.client.post("/upload", files={"file": (name, "本文。".encode(), "text/plain")})
        wait_until_done(user.client, sent.json()["id"])
    with tab(chromium, rest.url + "/", locale="ja-JP") as t:
        page = t.page
        page.set_viewport_size(PHONE)  # where the files table shows names in bold
        page.get_by_label("ユーザー名").fill(user.username)
        page.get_by_label("パスワード").fill(user.password)
        page.get_by_role("button", name="サインイン").click()
        for name in NAMES:
            cell = page.locator(".files-table td.name").filter(has_text=name)
            expect(cell).to_be_visible()
            weight = cell.evaluate("(el) => getComputedStyle(el).fontWeight")
            assert int(weight) >= 600, weight
            ratio = bold_over_regular(cell.get_by_role("link", name=name))
            assert ratio > 1.4, f"{name}: bold has {ratio:.2f}x the ink of regular"
            print(f"\n{name}: bold/regular ink {ratio:.2f}")
        t.shoot("49-cjk-bold-names")
        assert t.unexpected_errors() == []


# The list of readable types is written once per language (`lib.types`); each refusal says it
# whole, in the page's language, as when every refusal spelled it out.
REFUSALS = {
    "ja-JP": (
        "ユーザー名", "パスワード", "サインイン", "アップロードするファイル",
        "PNG 画像にはまだ対応していません：PDF、Word（.docx）、PowerPoint（.pptx）、"
        "Excel（.xlsx）、HTML、Markdown、テキスト、CSV、JSON をアップロードしてください。",
        "EXE ファイルにはまだ対応していません：PDF、Word（.docx）、PowerPoint（.pptx）、"
        "Excel（.xlsx）、HTML、Markdown、テキスト、CSV、JSON をアップロードしてください。",
    ),
    "zh-CN": (
        "用户名", "密码", "登录", "待上传的文件",
        "暂不支持 PNG 图片：请上传 PDF、Word（.docx）、PowerPoint（.pptx）、Excel（.xlsx）、"
        "HTML、Markdown、文本、CSV 或 JSON。",
        "暂不支持 EXE 文件：请上传 PDF、Word（.docx）、PowerPoint（.pptx）、Excel（.xlsx）、"
        "HTML、Markdown、文本、CSV 或 JSON。",
    ),
}  # fmt: skip


@pytest.mark.parametrize("locale", REFUSALS)
def test_a_refusal_names_every_readable_type_in_the_pages_language(rest, chromium, locale):
    username_label, password_label, sign_in_label, queue_name, png_says, exe_says = REFUSALS[locale]
    user = rest.new_user()
    with tab(chromium, rest.url + "/", locale=locale) as t:
        page = t.page
        page.get_by_label(username_label).fill(user.username)
        page.get_by_label(password_label).fill(user.password)
        page.get_by_role("button", name=sign_in_label, exact=True).click()
        page.locator("input[type=file]").set_input_files([
            {"name": "diagram.png", "mimeType": "image/png", "buffer": b"\x89PNG\r\n\x1a\n"},
            {"name": "setup.exe", "mimeType": "application/octet-stream", "buffer": b"MZ"},
        ])  # fmt: skip
        queue = page.get_by_role("list", name=queue_name)
        for name, says in [("diagram.png", png_says), ("setup.exe", exe_says)]:
            refused = queue.get_by_role("listitem").filter(has_text=name)
            expect(refused.get_by_role("alert")).to_have_text(says)
        assert t.unexpected_errors() == []
