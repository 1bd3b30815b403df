"""Remove links to outside content from an ODF or OOXML package before LibreOffice opens it.

The second wall behind the sandbox (and the only one when it is switched off): a picture,
OLE object, linked section, spreadsheet source or template that points outside the package
(`http://…`, `file:///…`, `../../etc/…`, `\\\\host\\share`) is dropped, so LibreOffice has
nothing to fetch. Hyperlinks stay: they are written into the PDF, never followed.

- OOXML (.docx .xlsx .pptx): every relationship with TargetMode="External" that is not a
  hyperlink is removed from its `.rels` part (the picture then shows as missing).
- OOXML fields that load outside content (INCLUDEPICTURE, INCLUDETEXT, LINK, DDE…) lose
  their instruction, so the field keeps only its last shown result.
- ODF (.odt .ods .odp): every element of content.xml / styles.xml whose xlink:href (or
  table/section source) names anything but an entry of the package is removed, except
  text and draw hyperlinks.

Unpacked parts are bounded (`MAX_UNPACKED_BYTES`), so a zip bomb fails here, readably.
The XML is parsed without DTDs, entities or network.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
import zlib
from urllib.parse import unquote

from lxml import etree

from bunko.errors import ParseError

OOXML_SUFFIXES = frozenset({".docx", ".xlsx", ".pptx"})
ODF_SUFFIXES = frozenset({".odt", ".ods", ".odp"})
MAX_UNPACKED_BYTES = 512 * 1024 * 1024
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_HYPERLINK_TYPE = "/hyperlink"
_ODF_HYPERLINKS = frozenset(
    {
        "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}a",
        "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}a",
    }
)
_ODF_PARTS = frozenset({"content.xml", "styles.xml"})
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_LOADING_FIELD = re.compile(r"^\s*(INCLUDEPICTURE|INCLUDETEXT|LINK|DDE|DDEAUTO|IMPORT)\b", re.I)
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def strip_external_links(data: bytes, suffix: str) -> bytes:
    """`data` with its external links removed; unchanged if it is not such a package."""
    if suffix not in OOXML_SUFFIXES | ODF_SUFFIXES:
        return data
    try:
        source = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        return data  # not a package after all: LibreOffice decides (inside its sandbox)
    entries = set(source.namelist())
    out = io.BytesIO()
    unpacked = 0
    with source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            unpacked += info.file_size
            if unpacked > MAX_UNPACKED_BYTES:
                raise ParseError("the document unpacks to more than 512 MB")
            body = _read(source, info)
            if suffix in OOXML_SUFFIXES and info.filename.endswith(".rels"):
                body = _strip_relationships(body)
            elif (
                suffix == ".docx" and info.filename.startswith("word/") and body.find(b"instr") >= 0
            ):
                body = _strip_fields(body)
            elif suffix in ODF_SUFFIXES and posixpath.basename(info.filename) in _ODF_PARTS:
                body = _strip_odf(body, posixpath.dirname(info.filename), entries)
            target.writestr(info, body)
    return out.getvalue()


def _read(source: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    # zipfile reads at most the size the archive claims (already counted against the
    # bound) and checks the CRC, so a part that lies about its size is refused here.
    try:
        return source.read(info)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ParseError(f"the document's package is damaged ({info.filename})") from exc


def _parse(body: bytes) -> etree._Element | None:
    try:
        return etree.fromstring(body, _PARSER)
    except etree.XMLSyntaxError:
        return None  # left as it is: LibreOffice will refuse it or skip it


def _strip_relationships(body: bytes) -> bytes:
    root = _parse(body)
    if root is None:
        return body
    removed = False
    for rel in list(root):
        external = rel.get("TargetMode", "").lower() == "external"
        if external and not rel.get("Type", "").endswith(_HYPERLINK_TYPE):
            root.remove(rel)
            removed = True
    return _serialise(root) if removed else body


def _strip_fields(body: bytes) -> bytes:
    root = _parse(body)
    if root is None:
        return body
    removed = False
    for text in root.iter(f"{_W}instrText"):
        if text.text and _LOADING_FIELD.match(text.text):
            text.text, removed = "", True
    for simple in root.iter(f"{_W}fldSimple"):
        if _LOADING_FIELD.match(simple.get(f"{_W}instr", "")):
            simple.set(f"{_W}instr", "")
            removed = True
    return _serialise(root) if removed else body


def _serialise(root: etree._Element) -> bytes:
    # the whole tree, so processing instructions before the root element stay
    return etree.tostring(root.getroottree(), xml_declaration=True, encoding="UTF-8")


def _strip_odf(body: bytes, folder: str, entries: set[str]) -> bytes:
    root = _parse(body)
    if root is None:
        return body
    removed = False
    for element in list(root.iter()):
        if element.tag in _ODF_HYPERLINKS or not isinstance(element.tag, str):
            continue
        href = element.get(_XLINK_HREF)
        if href is not None and not _inside(href, folder, entries):
            parent = element.getparent()
            if parent is not None:
                parent.remove(element)
                removed = True
    return _serialise(root) if removed else body


def _inside(href: str, folder: str, entries: set[str]) -> bool:
    """True if `href` names an entry (or a folder of entries, as embedded objects are)."""
    href = unquote(href)
    if not href or ":" in href.split("/", 1)[0] or href.startswith(("/", "\\")):
        return False  # a scheme (http:, file:, smb:), an absolute or a UNC path
    if "\\" in href:
        return False  # Windows separators: never an entry's name
    path = posixpath.normpath(posixpath.join(folder, href))
    if path.startswith("..") or path == ".":
        return False
    return path in entries or any(e.startswith(path + "/") for e in entries)
