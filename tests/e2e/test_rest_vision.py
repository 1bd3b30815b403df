"""GET /api/vision/recommend-mode over a real server: file type, size, and for uploaded
PDFs the text its pages carry decide fast vs precise; messages follow the user's language."""

from __future__ import annotations

from tests.e2e.rest_harness import assert_error, wait_until_done
from tests.fixtures_files import make_pdf

MB = 1024 * 1024


def recommend(user, **params):
    response = user.client.get("/api/vision/recommend-mode", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def upload_and_wait(user, name: str, data: bytes) -> None:
    record = user.client.post("/upload", files={"file": (name, data, "application/pdf")}).json()
    assert wait_until_done(user.client, record["id"])["status"] == "completed"


def test_images_need_precise_mode_with_cost_and_warnings(rest):
    user = rest.new_user()
    advice = recommend(user, file="scan.png", size=500_000)
    assert advice["recommendedMode"] == "precise"
    assert advice["estimatedCost"] > 0 and advice["estimatedTime"] > 0
    assert any("fees" in w for w in advice["warnings"])
    assert any("supportsVision" in w for w in advice["warnings"])
    user.client.post(
        "/model-configs",
        json={
            "name": "v",
            "provider": "openai",
            "modelId": "gpt-4o",
            "type": "llm",
            "supportsVision": True,
        },
    )
    assert not any("supportsVision" in w for w in recommend(user, file="scan.png")["warnings"])


def test_files_that_carry_text_are_fast(rest):
    user = rest.new_user()
    for name in ("report.docx", "notes.md", "table.xlsx"):
        advice = recommend(user, file=name, size=200_000)
        assert advice["recommendedMode"] == "fast" and advice["estimatedCost"] == 0
        assert advice["warnings"] == []


def test_uploaded_pdfs_are_judged_by_the_text_on_their_pages(rest):
    user = rest.new_user()
    page = "This page is full of ordinary text about the lighthouse keeper. " * 20
    upload_and_wait(user, "text.pdf", make_pdf([page, page, page]))
    upload_and_wait(user, "scan.pdf", make_pdf(["p.1", "p.2", "p.3", "p.4"]))
    text = recommend(user, file="text.pdf")
    assert (text["recommendedMode"], text["pages"]) == ("fast", 3)
    assert text["charsPerPage"] > 1000 and text["estimatedCost"] == 0
    scan = recommend(user, file="scan.pdf")
    assert (scan["recommendedMode"], scan["pages"]) == ("precise", 4)
    assert scan["charsPerPage"] < 200 and scan["estimatedCost"] > 0
    assert "characters per page" in scan["reason"]


def test_pdfs_not_uploaded_are_judged_by_size(rest):
    user = rest.new_user()
    small = recommend(user, file="small.pdf", size=300_000)
    large = recommend(user, file="large.pdf", size=30 * MB)
    assert small["recommendedMode"] == "fast" and large["recommendedMode"] == "precise"
    assert large["pages"] > small["pages"] and large["estimatedTime"] > small["estimatedTime"]
    assert any("Upload" in w for w in small["warnings"])
    over = recommend(user, file="huge.pdf", size=200 * MB)
    assert any("limit" in w for w in over["warnings"])


def test_messages_follow_the_users_language(rest):
    user = rest.new_user()
    user.client.put("/user-settings", json={"language": "ja"})
    japanese = recommend(user, file="large.pdf", size=30 * MB)
    assert japanese["reason"] == "ファイルサイズが大きいため、高精度モードを推奨します。"
    assert "処理時間が長くなる可能性があります" in japanese["warnings"]
    chinese = recommend(user, file="large.pdf", size=30 * MB, lang="zh")
    assert "高精度模式" in chinese["reason"]


def test_bad_queries(rest):
    user = rest.new_user()
    assert "file" in str(
        assert_error(user.client.get("/api/vision/recommend-mode"), 400)["message"]
    )
    negative = user.client.get("/api/vision/recommend-mode", params={"file": "a.pdf", "size": -1})
    assert "size" in str(assert_error(negative, 400)["message"])
    assert_error(rest.client().get("/api/vision/recommend-mode", params={"file": "a.pdf"}), 401)
