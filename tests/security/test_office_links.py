"""The package cleaner in front of LibreOffice, part by part: external relationships and
loading fields go, hyperlinks and pictures inside the package stay, lies about sizes fail."""

from __future__ import annotations

import io
import zipfile

import pytest

from bunko.adapters.local.office_links import strip_external_links
from bunko.errors import ParseError
from tests.fixtures_files import make_docx
from tests.security.office_attacks import docx_including, docx_linking, odt_linking, png


def part(package: bytes, name: str) -> str:
    return zipfile.ZipFile(io.BytesIO(package)).read(name).decode()


def test_external_relationships_go_and_hyperlinks_stay():
    docx = docx_linking(make_docx(["x"]), "http://10.0.0.1/x.png")
    rels = "word/_rels/document.xml.rels"
    source = zipfile.ZipFile(io.BytesIO(docx))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == rels:
                data = data.replace(
                    b"</Relationships>",
                    b'<Relationship Id="rIdLink" Type="http://schemas.openxmlformats.org/'
                    b'officeDocument/2006/relationships/hyperlink" Target="https://example.org" '
                    b'TargetMode="External"/></Relationships>',
                )
            z.writestr(item, data)
    cleaned = part(strip_external_links(out.getvalue(), ".docx"), rels)
    assert "10.0.0.1" not in cleaned and "rIdEvil" not in cleaned
    assert "https://example.org" in cleaned


def test_loading_fields_lose_their_instruction():
    docx = docx_including(make_docx(["x"]), "http://10.0.0.1/y.png")
    assert "INCLUDEPICTURE" in part(docx, "word/document.xml")
    cleaned = part(strip_external_links(docx, ".docx"), "word/document.xml")
    assert "INCLUDEPICTURE" not in cleaned and "picture" in cleaned


@pytest.mark.parametrize(
    "href", ["http://10.0.0.1/x.png", "file:///etc/x.png", "../../x.png", "%2e%2e/x.png", "/x.png"]
)
def test_odf_pictures_outside_the_package_go(href):
    cleaned = part(strip_external_links(odt_linking(href), ".odt"), "content.xml")
    assert "draw:image" not in cleaned and "A document with a picture." in cleaned


def test_odf_pictures_inside_the_package_stay():
    odt = odt_linking("Pictures/p.png", embedded=png())
    cleaned = zipfile.ZipFile(io.BytesIO(strip_external_links(odt, ".odt")))
    assert 'xlink:href="Pictures/p.png"' in cleaned.read("content.xml").decode()
    assert cleaned.read("Pictures/p.png") == png()


def test_a_part_larger_than_it_claims_is_refused():
    odt = odt_linking("Pictures/p.png", embedded=png())
    # claim content.xml is 10 bytes long: the real part is longer
    data = bytearray(odt)
    source = zipfile.ZipFile(io.BytesIO(odt))
    info = source.getinfo("content.xml")
    header = info.header_offset
    data[header + 22 : header + 26] = (10).to_bytes(4, "little")  # local header size
    central = odt.rfind(b"PK\x01\x02", 0, odt.find(b"content.xml", header + 30 + 11))
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")  # central directory size
    with pytest.raises(ParseError):
        strip_external_links(bytes(data), ".odt")
