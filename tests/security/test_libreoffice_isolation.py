"""Finding 1: LibreOffice fetched whatever a document linked to (SSRF into the host's network)
and read server-local files into the PDF. Each attack is replayed over a real server with a
real `soffice`; a loopback listener must receive nothing and no linked picture may reach the
PDF, while ordinary documents (and pictures inside the package) still convert."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from bunko.adapters.local.soffice import SofficeConverter
from bunko.adapters.local.soffice_sandbox import SofficeSandbox
from bunko.parsing import parse
from tests.e2e.rest_harness import assert_error, serve
from tests.fixtures_files import make_docx, make_pptx, make_xlsx
from tests.security.office_attacks import docx_linking, listening, odt_linking, png

pytestmark = [
    pytest.mark.skipif(
        shutil.which("soffice") is None, reason="LibreOffice (soffice) is not installed"
    ),
    pytest.mark.slow,  # LibreOffice (soffice) in its sandbox
]
ODT = "application/vnd.oasis.opendocument.text"


def convert(user, name: str, data: bytes) -> bytes:
    response = user.client.post("/libreoffice/convert", files={"file": (name, data, ODT)})
    assert response.status_code == 200, response.text
    pdf = user.client.get(response.json()["pdf_path"]).content
    assert pdf.startswith(b"%PDF")
    return pdf


def has_picture(pdf: bytes) -> bool:
    return b"/Subtype/Image" in pdf.replace(b" ", b"")


def test_linked_pictures_reach_no_address(rest):
    user = rest.new_user()
    with listening() as listener:
        url = f"http://127.0.0.1:{listener.port}/x.png"
        odt = convert(user, "linked.odt", odt_linking(url))
        docx = convert(user, "linked.docx", docx_linking(make_docx(["Linked."]), url))
    assert listener.connections == []
    assert not has_picture(odt) and not has_picture(docx)


def test_a_server_local_file_never_enters_the_pdf(rest, tmp_path):
    user = rest.new_user()
    secret = tmp_path / "secret.png"
    secret.write_bytes(png())
    for href in (secret.as_uri(), "../../../../../../../.." + str(secret)):
        assert not has_picture(convert(user, "local.odt", odt_linking(href)))
    assert not has_picture(convert(user, "local.docx", docx_linking(make_docx(["x"]), href)))
    # the check can fail: the same picture inside the package does show in the PDF
    assert has_picture(convert(user, "inside.odt", odt_linking("Pictures/p.png", embedded=png())))


def test_ordinary_documents_still_convert(rest):
    user = rest.new_user()
    documents = {
        "report.docx": make_docx(["The lighthouse budget grew."]),
        "sheet.xlsx": make_xlsx({"Budget": [["lighthouse", 42]]}),
        "deck.pptx": make_pptx([("Lighthouse", "The lighthouse budget grew.", None)]),
        "note.odt": odt_linking("Pictures/p.png", embedded=png()),
    }
    for name, data in documents.items():
        text = parse(convert(user, name, data), filename="out.pdf").text.lower()
        assert "lighthouse" in text or "picture" in text, (name, text)


def test_without_a_sandbox_it_refuses_rather_than_run_unprotected(tmp_path):
    with serve(tmp_path / "data") as rest:
        converter = SofficeConverter()
        converter.sandbox = SofficeSandbox(converter.binary, unshare="/nonexistent/unshare")
        rest.services.conversions.converter = converter
        with listening() as listener:
            url = f"http://127.0.0.1:{listener.port}/x.png"
            response = rest.new_user().client.post(
                "/libreoffice/convert", files={"file": ("a.odt", odt_linking(url), ODT)}
            )
        assert "isolation" in assert_error(response, 503)["message"]
        assert listener.connections == []


def test_links_are_stripped_even_without_the_sandbox(tmp_path):
    """The second wall alone (BUNKO_LIBREOFFICE_SANDBOX=off): external links are removed from
    the package before LibreOffice opens it."""
    converter = SofficeConverter(sandbox=False)
    secret = tmp_path / "secret.png"
    secret.write_bytes(png())
    with listening() as listener:
        url = f"http://127.0.0.1:{listener.port}/x.png"
        pdfs = [
            converter.convert_to_pdf(odt_linking(url), "a.odt"),
            converter.convert_to_pdf(docx_linking(make_docx(["x"]), url), "a.docx"),
            converter.convert_to_pdf(odt_linking(secret.as_uri()), "a.odt"),
        ]
    assert listener.connections == []
    assert not any(has_picture(pdf) for pdf in pdfs)
    inside = converter.convert_to_pdf(odt_linking("Pictures/p.png", embedded=png()), "a.odt")
    assert has_picture(inside)


def test_the_jail_sees_no_host_file_and_reaches_no_address(tmp_path):
    """What any program in the jail (soffice, or whatever a document makes it run) gets."""
    secret = tmp_path / "secret.txt"
    secret.write_text("host data")
    job = tmp_path / "job"
    job.mkdir()
    probe = (  # bash, as it is in /usr/bin of every system that has LibreOffice
        f"test -e {secret} && echo 'secret True' || echo 'secret False'; echo uid $(id -u); "
        '(exec 3<>"/dev/tcp/127.0.0.1/$0") 2>/dev/null && echo connected || echo unreachable'
    )
    sandbox = SofficeSandbox(SofficeConverter().binary)
    with listening() as listener:
        command = sandbox.wrap(
            ["/usr/bin/bash", "-c", probe, str(listener.port)],
            job=job,
            root=tmp_path / "root",
        )
        out = subprocess.run(command, capture_output=True, text=True, timeout=60).stdout
    assert "secret False" in out and "unreachable" in out, out
    assert listener.connections == []
    if os.geteuid() == 0:
        assert "uid 65534" in out  # root outside runs the jail as nobody
