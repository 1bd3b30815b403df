"""bunko.parsing: real generated files of every type, encodings, corrupt and hostile input."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pypdf import PdfWriter

from bunko.errors import ParseError, UnsupportedMediaError
from bunko.parsing import (
    SUPPORTED_MIME_TYPES,
    ParsedDocument,
    guess_mime,
    is_supported,
    parse,
    resolve_mime,
)
from bunko.parsing.text import CSV_PIECE_CHARS, MAX_EMPTY_RUN
from tests.fixtures_files import (
    BINARY_KINDS,
    SAMPLE_KINDS,
    filename_for,
    make_docx,
    make_file,
    make_pdf,
    make_pptx,
    make_xlsx,
    needs_cjk_font,
)

ENGLISH = "Bunko is a small library.\n\nIt parses files & chunks them for search."
JAPANESE = "文庫は小さな図書館です。\n\n日本語の全文検索ができます。"
DOCX_MIME = SUPPORTED_MIME_TYPES[".docx"]


def squash(text: str) -> str:
    """PDF extraction re-wraps lines: compare text without whitespace."""
    return re.sub(r"\s+", "", text)


def assert_contains(doc: ParsedDocument, text: str) -> None:
    for paragraph in text.split("\n\n"):
        assert squash(paragraph) in squash(doc.text)


@pytest.mark.parametrize("kind", SAMPLE_KINDS)
def test_every_kind_yields_its_english_text(kind):
    doc = parse(make_file(kind, ENGLISH), filename=filename_for(kind))
    assert_contains(doc, ENGLISH)
    if kind not in ("pdf",):  # everything but PDF keeps the words' spacing exactly
        assert "It parses files & chunks them for search." in doc.text


@pytest.mark.parametrize("kind", [k for k in SAMPLE_KINDS if k != "pdf"])
def test_every_kind_yields_its_japanese_text(kind):
    doc = parse(make_file(kind, JAPANESE), filename=filename_for(kind))
    assert "文庫は小さな図書館です。" in doc.text
    assert "日本語の全文検索ができます。" in doc.text


@needs_cjk_font
def test_japanese_pdf():
    doc = parse(make_file("pdf", JAPANESE), filename="ja.pdf")
    assert_contains(doc, JAPANESE)


def test_pdf_pages_are_spans_of_the_text():
    pages = ["First page text.", "Second page text.", "Third page text."]
    doc = parse(make_pdf(pages), filename="report.pdf")
    assert [n for _, _, n in doc.pages] == [1, 2, 3]
    for (start, end, _), expected in zip(doc.pages, pages, strict=True):
        assert doc.text[start:end] == expected


def test_pdf_blank_page_keeps_numbering():
    doc = parse(make_pdf(["One.", " ", "Three."]), filename="gap.pdf")
    assert [(doc.text[s:e], n) for s, e, n in doc.pages] == [("One.", 1), ("Three.", 3)]


def test_pdf_without_text_is_a_parse_error():
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    out = io.BytesIO()
    writer.write(out)
    with pytest.raises(ParseError, match="no text"):
        parse(out.getvalue(), filename="scan.pdf")


def _encrypted_pdf(user_password: str) -> bytes:
    writer = PdfWriter(clone_from=io.BytesIO(make_pdf(["Secret plans."])))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_password_protected_pdf_is_a_parse_error():
    with pytest.raises(ParseError, match="encrypted"):
        parse(_encrypted_pdf("secret"), filename="locked.pdf")


def test_pdf_encrypted_without_user_password_opens():
    assert "Secret plans." in parse(_encrypted_pdf(""), filename="nocopy.pdf").text


def test_docx_tables_and_order():
    data = make_docx(["Title", "Before the table."], table=[["name", "age"], ["Alice", "30"]])
    text = parse(data, filename="t.docx").text
    assert "name\tage\nAlice\t30" in text
    assert text.index("Before the table.") < text.index("Alice")
    assert parse(data, filename="t.docx").pages == []


def test_pptx_slides_are_pages_and_notes_are_kept():
    data = make_pptx(
        [("Intro", "Hello slide one.", "Speaker notes here."), ("Next", "二枚目。", None)]
    )
    doc = parse(data, filename="deck.pptx")
    first, second = [(doc.text[s:e], n) for s, e, n in doc.pages]
    assert first[1] == 1 and second[1] == 2
    assert "Hello slide one." in first[0] and "Speaker notes here." in first[0]
    assert "textbox" in first[0]
    assert "二枚目。" in second[0]


def test_xlsx_sheets_are_pages_with_names_and_rows():
    data = make_xlsx(
        {"Budget": [["item", "cost"], ["paper", 12.0], [None, None]], "空": [], "メモ": [["備考"]]}
    )
    doc = parse(data, filename="book.xlsx")
    spans = [(doc.text[s:e], n) for s, e, n in doc.pages]
    assert spans == [("Budget\nitem\tcost\npaper\t12", 1), ("メモ\n備考", 3)]


def test_html_visible_text_with_structure():
    page = (
        b"<html><head><title>Doc title</title><style>.x{}</style></head><body>"
        b"<script>alert('no')</script><h1>Heading</h1><p>Hello <b>bold</b>\n   world.</p>"
        b"<div hidden>secret</div><!-- a comment --><p>Line one<br>Line two</p>"
        b"<pre>  keep   spaces\n    here</pre><table><tr><td>a</td><td>b</td></tr></table>"
        b"<noscript>enable js</noscript></body></html>"
    )
    text = parse(page, filename="page.html").text
    assert text.startswith("Doc title\n\nHeading\n\nHello bold world.\n\nLine one\nLine two")
    assert "  keep   spaces\n    here" in text
    assert "a\tb" in text
    for hidden in ("alert", "secret", "a comment", ".x{}", "enable js"):
        assert hidden not in text


def test_html_meta_charset_shift_jis():
    page = '<html><head><meta charset="Shift_JIS"></head><body><p>日本語のページ</p></body></html>'
    assert parse(page.encode("cp932"), filename="ja.htm").text == "日本語のページ"


def test_json_is_flattened_to_key_value_lines():
    data = json.dumps(
        {"name": "文庫", "tags": ["a", "b"], "meta": {"ok": True, "n": 3, "none": None}},
        ensure_ascii=False,
    ).encode()
    text = parse(data, filename="d.json").text
    assert text.splitlines() == [
        "name: 文庫",
        "tags[0]: a",
        "tags[1]: b",
        "meta.ok: true",
        "meta.n: 3",
    ]


@pytest.mark.parametrize("data", [b"{not json", b'{"a": 1', b"[" * 100_000])
def test_invalid_json_is_a_parse_error(data):
    with pytest.raises(ParseError, match="JSON"):
        parse(data, filename="bad.json")


def test_csv_quoting_and_tsv():
    data = b'name,comment\r\nAlice,"says ""hi"", twice"\r\nBob,"two\nlines"\r\n'
    assert (
        parse(data, filename="c.csv").text
        == 'name\tcomment\nAlice\tsays "hi", twice\nBob\ttwo lines'
    )
    assert parse(b"a\tb\n1\t2\n", filename="t.tsv").text == "a\tb\n1\t2"


def test_csv_rows_longer_than_a_piece_read_as_written():
    """A long line reaches the csv module in pieces (CSV_PIECE_CHARS); a cut inside a quoted
    field, before a run of empty cells, or between \\r and \\n changes nothing."""
    quoted = ", ".join(f'w{i} ""q""' for i in range(2_000))  # commas inside quotes
    rows = [
        ["a" * (CSV_PIECE_CHARS - 6), quoted, "tail"],  # the first cut lands inside `quoted`
        ["b" * (CSV_PIECE_CHARS + 10), "", "", "", "", "c"],  # cut just before empty cells
        [f"cell {i}" for i in range(40_000)],  # many cuts between unquoted cells
        ["two\r\nlines" + ",x" * 40_000, "last"],  # a quoted line end before the cuts
        ["short", "row", "", ""],
    ]
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    text = parse(out.getvalue().encode(), filename="long.csv").text
    expected = ["\t".join(" ".join(cell.split()) for cell in row).rstrip("\t") for row in rows]
    assert text.split("\n") == expected
    assert len(text) > 8 * CSV_PIECE_CHARS


def test_a_gap_of_empty_csv_cells_shrinks_as_in_a_workbook():
    row = "left" + "," * 5_000 + "right\n" + "a,,b\n"
    assert parse(row.encode(), filename="gap.csv").text == (
        "left" + "\t" * (MAX_EMPTY_RUN + 1) + "right\na\t\tb"
    )


@pytest.mark.parametrize(
    ("encoding", "prefix"),
    [
        ("cp932", b""),
        ("shift_jis", b""),
        ("euc_jp", b""),
        ("utf-8", b"\xef\xbb\xbf"),
        ("utf-16-le", b"\xff\xfe"),
        ("utf-16-be", b"\xfe\xff"),
    ],
)
def test_japanese_text_encodings_decode(encoding, prefix):
    text = "文庫は小さな図書館です。ファイルを解析し、検索できるようにします。"
    assert parse(prefix + text.encode(encoding), filename="ja.txt").text == text


def test_cp932_extensions_decode():
    text = "株式会社①の㈱と～全角チルダ。文庫は小さな図書館です。"
    assert parse(text.encode("cp932"), filename="win.txt").text == text


def test_utf16_without_bom_and_declared_charset():
    assert parse("plain words".encode("utf-16-le"), filename="u.txt").text == "plain words"
    data = "短い".encode("euc_jp")
    assert parse(data, filename="x.txt", mime="text/plain; charset=EUC-JP").text == "短い"


def test_text_is_kept_as_written_but_newlines_normalised():
    raw = "ＡＢＣ ｶﾀｶﾅ  two  spaces \r\nnext\rline\n\n\n\n\npara\x00\u2028end  \n"
    assert parse(raw.encode(), filename="n.txt").text == (
        "ＡＢＣ ｶﾀｶﾅ  two  spaces\nnext\nline\n\npara\nend"
    )


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8])
def test_binary_data_as_text_is_a_parse_error(data):
    with pytest.raises(ParseError, match="binary"):
        parse(data, filename="image.txt")


@pytest.mark.parametrize("kind", SAMPLE_KINDS)
def test_empty_file_is_a_parse_error(kind):
    with pytest.raises(ParseError, match="empty file"):
        parse(b"", filename=filename_for(kind))


@pytest.mark.parametrize("data", [b"   \n\t\n", b"{}", b"<html><body> </body></html>"])
def test_no_text_is_a_parse_error(data):
    name = {b"{": "x.json", b"<": "x.html"}.get(data[:1], "x.txt")
    with pytest.raises(ParseError, match="no text"):
        parse(data, filename=name)


def _corruptions(good: bytes) -> dict[str, bytes]:
    return {
        "truncated": good[: len(good) // 2],
        "header only": good[:64],
        "garbage": bytes((i * 37 + 11) % 256 for i in range(4096)),
        "magic then garbage": good[:8] + bytes((i * 91) % 251 for i in range(4096)),
    }


@pytest.mark.parametrize("kind", BINARY_KINDS)
def test_corrupt_binary_files_are_parse_errors(kind):
    good = make_file(kind, ENGLISH)
    for name, data in _corruptions(good).items():
        with pytest.raises(ParseError) as info:
            parse(data, filename=filename_for(kind))
        message = str(info.value)
        assert kind.upper() in message, name
        assert "\n" not in message and "Traceback" not in message and len(message) < 300


@pytest.mark.parametrize("kind", ["docx", "pptx", "xlsx"])
def test_office_zip_of_the_wrong_kind_is_a_parse_error(kind):
    other = "xlsx" if kind != "xlsx" else "docx"
    with pytest.raises(ParseError, match=f"not a valid {kind.upper()}"):
        parse(make_file(other, ENGLISH), filename=filename_for(kind), mime=None)


def test_password_protected_office_file_says_so():
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)
    with pytest.raises(ParseError, match="password-protected"):
        parse(ole, filename="locked.docx")


@pytest.mark.parametrize("name", ["photo.jpg", "archive.zip", "program.exe", "noextension"])
def test_unknown_types_are_unsupported(name):
    with pytest.raises(UnsupportedMediaError):
        parse(b"\x00\x01\x02binary\x00", filename=name)
    assert not is_supported(name)


def test_supported_types_and_guessing():
    assert SUPPORTED_MIME_TYPES[".pdf"] == "application/pdf"
    assert guess_mime("REPORT.PDF") == "application/pdf"
    assert guess_mime("dir/notes.md") == "text/markdown"
    assert guess_mime("photo.jpg") == "image/jpeg"
    assert guess_mime("blob") == "application/octet-stream"
    assert is_supported("a.docx") and is_supported("x", "text/plain; charset=utf-8")
    assert not is_supported("x", "image/png")


@pytest.mark.parametrize("kind", ["pdf", "docx", "pptx", "xlsx", "html", "json", "txt"])
def test_sniffing_without_extension(kind):
    data = make_file(kind, ENGLISH)
    expected = "text/plain" if kind == "txt" else SUPPORTED_MIME_TYPES[f".{kind}"]
    assert guess_mime("upload", data) == expected
    assert_contains(parse(data, filename="upload"), ENGLISH)


def test_declared_mime_wins_and_generic_mime_falls_back():
    assert resolve_mime("a.txt", b"x", "text/html") == "text/html"
    assert resolve_mime("a.docx", None, "application/octet-stream") == DOCX_MIME
    assert parse(b"<p>hi</p>", filename="a.txt", mime="text/html").text == "hi"
    with pytest.raises(UnsupportedMediaError):
        parse(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", filename="a.bin", mime="image/png")


_FUZZ_NAMES = [filename_for(k) for k in SAMPLE_KINDS] + ["x.tsv", "x.htm"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(_FUZZ_NAMES), data=st.binary(max_size=2048))
def test_arbitrary_bytes_parse_or_raise_parse_error(name, data):
    try:
        doc = parse(data, filename=name)
    except ParseError as exc:
        message = str(exc)
    else:
        assert doc.text and doc.text == doc.text.strip()
        return
    assert message and "\n" not in message


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(BINARY_KINDS), cut=st.floats(0.05, 0.95), flip=st.integers(0, 10**6))
def test_damaged_office_and_pdf_files_never_crash(kind, cut, flip):
    good = bytearray(_GOOD[kind])
    good[flip % len(good)] ^= 0xFF
    message = ""
    try:
        parse(bytes(good[: max(1, int(len(good) * cut))]), filename=filename_for(kind))
    except ParseError as exc:
        message = str(exc)
    assert "\n" not in message


_GOOD = {kind: make_file(kind, ENGLISH) for kind in BINARY_KINDS}
