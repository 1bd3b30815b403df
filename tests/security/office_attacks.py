"""Hostile office documents: files whose content links to outside resources that LibreOffice
would fetch (over HTTP) or read (file://) while converting, plus a loopback listener that
records every connection, so a test can prove nothing reached it."""

from __future__ import annotations

import io
import socket
import struct
import threading
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

_ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
    'xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.2"'
)
_ODT_MIME = "application/vnd.oasis.opendocument.text"


def png(width: int = 64, height: int = 64, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A plain one-colour PNG (what a "server-local" image looks like)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def odt_linking(href: str, *, embedded: bytes | None = None) -> bytes:
    """An .odt whose only picture is `href`, linked and loaded on open; with `embedded`,
    `href` names that picture inside the package instead (an ordinary document)."""
    text = "A document with a picture."
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_ODF_NS}>'
        "<office:body><office:text>"
        f"<text:p>{text}</text:p><text:p>"
        '<draw:frame draw:name="p" text:anchor-type="as-char" svg:width="2cm" svg:height="2cm">'
        f'<draw:image xlink:href="{href}" xlink:type="simple" xlink:show="embed" '
        'xlink:actuate="onLoad"/></draw:frame></text:p>'
        "</office:text></office:body></office:document-content>"
    )
    picture = (
        f'<manifest:file-entry manifest:full-path="{href}" manifest:media-type="image/png"/>'
        if embedded is not None
        else ""
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" '
        'manifest:version="1.2">'
        f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{_ODT_MIME}"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        f"{picture}</manifest:manifest>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), _ODT_MIME)  # stored, first, as ODF wants
        z.writestr("content.xml", content, zipfile.ZIP_DEFLATED)
        z.writestr("META-INF/manifest.xml", manifest, zipfile.ZIP_DEFLATED)
        if embedded is not None:
            z.writestr(href, embedded)
    return buffer.getvalue()


def docx_linking(docx: bytes, href: str) -> bytes:
    """`docx` (a python-docx file) with a linked picture at `href` (TargetMode External)."""
    source = zipfile.ZipFile(io.BytesIO(docx))
    buffer = io.BytesIO()
    drawing = (
        '<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/'
        'drawingml/2006/wordprocessingDrawing"><wp:extent cx="914400" cy="914400"/>'
        '<wp:docPr id="99" name="linked"/><a:graphic xmlns:a="http://schemas.openxmlformats.org/'
        'drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/'
        'drawingml/2006/picture"><pic:pic xmlns:pic="http://schemas.openxmlformats.org/'
        'drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="99" name="linked"/><pic:cNvPicPr/>'
        '</pic:nvPicPr><pic:blipFill><a:blip r:link="rIdEvil"/><a:stretch><a:fillRect/>'
        '</a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="914400" '
        'cy="914400"/></a:xfrm><a:prstGeom prst="rect"/></pic:spPr></pic:pic></a:graphicData>'
        "</a:graphic></wp:inline></w:drawing></w:r></w:p>"
    )
    relationship = (
        '<Relationship Id="rIdEvil" Type="http://schemas.openxmlformats.org/officeDocument/'
        f'2006/relationships/image" Target="{href}" TargetMode="External"/>'
    )
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                data = data.replace(b"<w:sectPr", drawing.encode() + b"<w:sectPr", 1)
            elif item.filename == "word/_rels/document.xml.rels":
                data = data.replace(
                    b"</Relationships>", relationship.encode() + b"</Relationships>"
                )
            z.writestr(item, data)
    return buffer.getvalue()


def docx_including(docx: bytes, href: str) -> bytes:
    """`docx` with an INCLUDEPICTURE field that loads `href` (no relationship involved)."""
    field = (
        '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText '
        f'xml:space="preserve"> INCLUDEPICTURE "{href}" \\d </w:instrText></w:r><w:r>'
        '<w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>picture</w:t></w:r><w:r>'
        '<w:fldChar w:fldCharType="end"/></w:r></w:p>'
    )
    source = zipfile.ZipFile(io.BytesIO(docx))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                data = data.replace(b"<w:sectPr", field.encode() + b"<w:sectPr", 1)
            z.writestr(item, data)
    return buffer.getvalue()


class Listener:
    """A TCP listener on loopback that accepts and records every connection."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.connections.append(conn.recv(4096))
                    body = png()
                    conn.sendall(
                        b"HTTP/1.0 200 OK\r\nContent-Type: image/png\r\nContent-Length: "
                        + str(len(body)).encode()
                        + b"\r\n\r\n"
                        + body
                    )
                except OSError:
                    self.connections.append(b"")


@contextmanager
def listening() -> Iterator[Listener]:
    listener = Listener()
    listener._thread.start()
    try:
        yield listener
    finally:
        listener._stop.set()
        listener._thread.join(5)
        listener.sock.close()
