"""/libreoffice over a real server: a real .docx → PDF with soffice when it is installed,
health with uptime, and a clear 503 when LibreOffice is absent."""

from __future__ import annotations

import shutil

import pytest

from bunko.adapters.local.soffice import SofficeConverter
from bunko.parsing import parse
from tests.e2e.rest_harness import assert_error, serve
from tests.fixtures_files import make_docx

pytestmark = pytest.mark.slow  # LibreOffice (soffice) conversions

needs_soffice = pytest.mark.skipif(
    shutil.which("soffice") is None, reason="LibreOffice (soffice) is not installed"
)
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@needs_soffice
def test_health_reports_version_and_uptime(rest):
    with rest.client() as anonymous:
        first = anonymous.get("/libreoffice/health")
        second = anonymous.get("/libreoffice/health")
    assert first.status_code == 200
    body = first.json()
    assert body["status"] == "healthy" and body["service"] == "libreoffice-converter"
    assert "LibreOffice" in body["version"]
    assert 0 <= body["uptime"] <= second.json()["uptime"]


@needs_soffice
def test_converts_a_real_docx_to_pdf(rest):
    user = rest.new_user()
    docx = make_docx(["Quarterly report", "The lighthouse budget grew by ten percent."])
    response = user.client.post("/libreoffice/convert", files={"file": ("report.docx", docx, DOCX)})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["converted"] is True and body["original"] == "report.docx"
    pdf = user.client.get(body["pdf_path"])
    assert pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf"
    assert pdf.content.startswith(b"%PDF") and len(pdf.content) == body["file_size"]
    assert "lighthouse budget" in parse(pdf.content, filename="report.pdf").text
    # the PDF is the converting user's: another user gets 404
    assert_error(rest.new_user().client.get(body["pdf_path"]), 404)


def test_conversion_input_is_checked(rest):
    user = rest.new_user()
    wrong_type = user.client.post(
        "/libreoffice/convert", files={"file": ("a.txt", b"text", "text/plain")}
    )
    assert ".docx" in assert_error(wrong_type, 415)["message"]
    empty = user.client.post("/libreoffice/convert", files={"file": ("a.docx", b"", DOCX)})
    assert_error(empty, 400)
    anonymous = rest.client().post("/libreoffice/convert", files={"file": ("a.docx", b"x", DOCX)})
    assert_error(anonymous, 401)
    assert_error(user.client.get("/libreoffice/files/not-a-conversion.pdf"), 404)


def test_without_libreoffice_both_endpoints_answer_503(tmp_path):
    with serve(tmp_path / "data") as rest:
        # The same server, with the converter's binary gone, as on a machine without it.
        rest.services.conversions.converter = SofficeConverter(binary="/nonexistent/soffice")
        health = rest.client().get("/libreoffice/health")
        assert "not installed" in assert_error(health, 503)["message"]
        user = rest.new_user()
        convert = user.client.post(
            "/libreoffice/convert", files={"file": ("a.docx", make_docx(["x"]), DOCX)}
        )
        assert "not installed" in assert_error(convert, 503)["message"]
