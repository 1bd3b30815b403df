"""mode=precise over a real server: an image-only PDF (English and Japanese text drawn into
page images, no text layer) fails in fast mode with the precise-mode hint, is recommended
precise, and becomes searchable when uploaded in precise mode (local Tesseract OCR)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bunko.parsing.ocr import ocr_available
from bunko.services.search.search import SearchOptions
from tests.e2e.rest_harness import wait_until_done

FONT = Path("/usr/share/fonts/opentype/ipaexfont-gothic/ipaexg.ttf")
PAGES = [
    ["Lighthouse keepers", "trim the lamp wicks", "every evening."],
    ["灯台守は毎晩", "ランプの芯を整えます。"],
]

pytestmark = [
    pytest.mark.skipif(ocr_available() is not None, reason=f"no OCR here: {ocr_available()}"),
    pytest.mark.skipif(not FONT.is_file(), reason="fonts-ipaexfont-gothic is not installed"),
]


def image_only_pdf() -> bytes:
    """Two pages that are pictures of text: PIL writes each image as a page, no text layer."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(FONT), 64)
    images = []
    for lines in PAGES:
        image = Image.new("RGB", (1654, 1170), "white")  # A5 landscape at 200 dpi
        draw = ImageDraw.Draw(image)
        for i, line in enumerate(lines):
            draw.text((120, 150 + i * 120), line, font=font, fill="black")
        images.append(image)
    out = io.BytesIO()
    images[0].save(out, "PDF", resolution=200.0, save_all=True, append_images=images[1:])
    return out.getvalue()


def upload(user, data: bytes, **form) -> dict:
    files = {"file": ("scan.pdf", data, "application/pdf")}
    response = user.client.post("/upload", files=files, data=form)
    assert response.status_code == 201, response.text
    return wait_until_done(user.client, response.json()["id"], timeout=300)


def test_the_generated_pdf_has_no_text_layer():
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(image_only_pdf()))
    assert len(reader.pages) == 2
    assert all(not (page.extract_text() or "").strip() for page in reader.pages)


def test_fast_mode_fails_with_the_precise_hint_and_precise_is_recommended(rest):
    user = rest.new_user()
    record = upload(user, image_only_pdf())
    assert record["status"] == "failed"
    assert "mode=precise" in record["error"] and "no text" in record["error"]
    advice = user.client.get("/api/vision/recommend-mode", params={"file": "scan.pdf"}).json()
    assert advice["recommendedMode"] == "precise"


@pytest.mark.slow  # Tesseract OCR, English and Japanese
def test_precise_mode_makes_english_and_japanese_searchable(rest):
    user = rest.new_user()
    record = upload(user, image_only_pdf(), mode="precise")
    assert record["status"] == "completed", record["error"]
    workspace = rest.services.identity.authenticate(user.token).workspace_id
    text = " ".join(c.content for c in rest.services.metadata.get_chunks(workspace, record["id"]))
    assert "Lighthouse" in text and "灯台" in text
    for query in ("lighthouse lamp", "灯台守", "ランプ"):
        found = rest.services.search.search(workspace, query, SearchOptions()).items
        assert found and found[0].document_id == record["id"], query
