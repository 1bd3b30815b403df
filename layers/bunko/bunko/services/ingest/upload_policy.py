"""UploadPolicy: what a file must be before Bunko keeps it, decided once for every door.

REST /upload, the MCP write tools, the drop folder, S3 drops and presign all ask this one
object (DESIGN decision 9): a name of 1–255 characters, a logical path without `..` or
control characters, at most `max_file_bytes` and not empty, a type the parsers read. A door
checks what it knows early (a presign request's declared size, an S3 object's length, a
local file's size) and the ingest service checks the bytes again when they arrive.
"""

from __future__ import annotations

import posixpath
import unicodedata
from dataclasses import replace
from pathlib import PurePosixPath

from bunko.domain import Document, DocumentStatus
from bunko.errors import PayloadTooLargeError, UnsupportedMediaError, ValidationError
from bunko.parsing import SUPPORTED_MIME_TYPES, guess_mime, is_supported
from bunko.parsing.mime import normalize_mime
from bunko.services.bounds import check_name
from bunko.services.ingest.upload import Upload

MAX_NAME_LENGTH = 255
MAX_PATH_LENGTH = 1024
# The text types the parsers read: what add_item_text may store.
TEXT_MIME_TYPES = tuple(
    sorted(
        {t for t in SUPPORTED_MIME_TYPES.values() if t.startswith("text/") or t.endswith("/json")}
    )
)


def normalise_path(path: str) -> str:
    """A logical path: NFC, '/'-separated, no empty or dot segments, no control characters.
    NFC makes the NFC and NFD spellings of one name (macOS writes NFD) one path."""
    if not isinstance(path, str) or not path.strip():
        raise ValidationError("path must be a non-empty string")
    if len(path) > MAX_PATH_LENGTH:
        raise ValidationError(f"path is longer than {MAX_PATH_LENGTH} characters")
    check_name(path, field="path")  # control and bidi characters
    raw = unicodedata.normalize("NFC", path.strip().replace("\\", "/"))
    cleaned = posixpath.normpath(raw).lstrip("/")
    if cleaned in ("", ".") or cleaned.split("/")[0] == "..":
        raise ValidationError(f"invalid path {path!r}: it must stay inside the knowledge base")
    if any(len(part) > MAX_NAME_LENGTH for part in cleaned.split("/")):
        raise ValidationError(f"each part of a path holds at most {MAX_NAME_LENGTH} characters")
    return cleaned


class UploadPolicy:
    def __init__(self, *, max_file_bytes: int) -> None:
        self.max_file_bytes = max_file_bytes

    def path(self, path: str) -> str:
        """The normalised logical path, or ValidationError."""
        return normalise_path(path)

    def file_name(self, filename: str | None) -> str:
        """The base name of a client's file name (folders dropped), 1–255 characters."""
        raw = check_name((filename or "").replace("\\", "/"), field="file name")
        name = unicodedata.normalize("NFC", PurePosixPath(raw).name.strip())
        if not name or name in (".", "..") or len(name) > MAX_NAME_LENGTH:
            raise ValidationError(f"file: needs a file name of 1 to {MAX_NAME_LENGTH} characters")
        return name

    def size(self, size: int, *, what: str = "file") -> None:
        """PayloadTooLargeError above the limit; ValidationError for an empty file."""
        if size > self.max_file_bytes:
            raise PayloadTooLargeError(
                f"{what} is {size} bytes; the limit is {self.max_file_bytes} bytes"
            )
        if size <= 0:
            raise ValidationError(f"{what}: empty (0 bytes)")

    def check(self, upload: Upload) -> Upload:
        """The upload with its path (or file name) normalised, once it and its size are
        allowed. REST /upload checks its own way first (name, type, then size)."""
        if upload.path is not None:
            path = self.path(upload.path)
            self.size(len(upload.data), what=posixpath.basename(path))
            return replace(upload, path=path, policy_checked=True)
        name = None if upload.name is None else self.file_name(upload.name)
        self.size(len(upload.data), what=name or "file")
        return replace(upload, name=name, policy_checked=True)

    def file_type(self, name: str, content_type: str | None) -> None:
        """UnsupportedMediaError unless the declared type or the extension is one Bunko reads."""
        if not is_supported(name, content_type):
            raise UnsupportedMediaError(refusal(name))

    def text_mime(self, path: str, mime: str | None) -> str:
        """The type stored for text: the one given (if text Bunko reads), else the one the
        path's extension suggests, else text/plain."""
        if mime is None:
            guessed = normalize_mime(guess_mime(posixpath.basename(normalise_path(path))))
            return guessed if guessed in TEXT_MIME_TYPES else "text/plain"
        normal = normalize_mime(mime)
        if normal not in TEXT_MIME_TYPES:
            raise ValidationError(
                f"text is stored as one of {', '.join(TEXT_MIME_TYPES)} (or mime omitted),"
                f" not {mime}"
            )
        return normal

    @staticmethod
    def keep_failed(doc: Document) -> bool:
        """Whether a document whose indexing failed stays: a caller that waits for the result
        (MCP) discards a failed first revision, so nothing unsearchable is left behind; a
        failed new revision keeps the document (its earlier text stays searchable)."""
        return not (doc.status is DocumentStatus.FAILED and doc.revision == 1)


_IMAGES = frozenset({"png", "jpg", "jpeg", "gif", "webp", "bmp", "tif", "tiff", "heic", "svg"})
READABLE = "PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), HTML, Markdown, text, CSV or JSON"


def refusal(name: str) -> str:
    """One sentence a person can act on: what the file is, that it is not read, what is."""
    ext = posixpath.splitext(name)[1].lstrip(".").lower()
    what = (
        f"{ext.upper()} images are"
        if ext in _IMAGES
        else f"{ext.upper()} files are"
        if ext
        else "Files of this type are"
    )
    return f"{what} not supported yet (unsupported file type for {name}): upload {READABLE}."


def numbered(name: str, n: int) -> str:
    """`report.pdf` for 1, `report (2).pdf` for 2, ..."""
    if n == 1:
        return name
    stem, ext = posixpath.splitext(name)
    return f"{stem} ({n}){ext}" if stem else f"{name} ({n})"
