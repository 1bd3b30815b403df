"""A library's portable archive (docs/owners.md, "Moving a library"): one zip file.

    manifest.json        the format and its version, the library, its settings, members by
                         username, sources' settings, counts
    documents.jsonl      one line a document: its path, metadata, category, source, state
    originals/<sha256>   each original's bytes, named by their SHA-256 (one copy per content)
    conversations.jsonl  only when exported with --conversations
    answers.jsonl        only with --conversations: answers people marked, and the missing list
    vectors.jsonl        only when exported with --vectors

The writer streams: one original in memory at a time. The reader checks the whole archive
before the import writes anything (`ArchiveReader.check`): its type, every name, every
size, the central directory's layout (a zip bomb's overlapping entries), the manifest's
format and version, every line of documents.jsonl, and every original's SHA-256.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from bunko.domain.metadata import check_metadata
from bunko.errors import ValidationError

FORMAT = "bunko-library"
# What this Bunko writes and the newest it reads. 2 added earlier revisions and answers.jsonl:
# a Bunko that reads 1 says to upgrade instead of dropping the history without a word.
VERSION = 2
MANIFEST = "manifest.json"
DOCUMENTS = "documents.jsonl"
CONVERSATIONS = "conversations.jsonl"
ANSWERS = "answers.jsonl"
VECTORS = "vectors.jsonl"
ORIGINALS = "originals/"
_ORIGINAL = re.compile(r"^originals/[0-9a-f]{64}$")
_NAMES = (MANIFEST, DOCUMENTS, CONVERSATIONS, ANSWERS, VECTORS)

BLOCK = 1 << 20
MAX_MANIFEST_BYTES = 16 << 20
MAX_LINE_BYTES = 64 << 20  # one JSON line (a conversation with its messages is the largest)
MAX_ENTRIES = 5_000_000
# Deflate shrinks at most ~1030:1; text that honestly compresses shrinks far less than 200:1
# beyond its first megabyte. An entry past both is refused as a bomb.
MAX_RATIO = 200
RATIO_FLOOR = 1 << 20


class ArchiveError(ValidationError):
    """An archive this Bunko cannot read; its message says why (nothing was written)."""


def original_name(content_hash: str) -> str:
    return ORIGINALS + content_hash


def compressible(mime: str) -> bool:
    """False for the types that are compressed already (deflating them again gains nothing)."""
    packed = (
        "application/pdf",
        "application/zip",
        "application/epub+zip",
        "image/",
        "application/vnd.openxmlformats",
        "application/vnd.oasis.opendocument",
    )
    return not mime.startswith(packed)


class ArchiveWriter:
    """Writes an archive at `path` through a temporary file beside it, renamed into place
    when `close(manifest)` completes: a failed export leaves no half archive behind."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._partial = path.with_name(path.name + ".partial")
        self.zip = zipfile.ZipFile(
            self._partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6
        )
        self._originals: set[str] = set()
        self._lines: dict[str, IO[bytes]] = {}

    def add_original(self, content_hash: str, data: bytes, *, mime: str) -> str:
        """The original's name in the archive; stored once per content."""
        name = original_name(content_hash)
        if name not in self._originals:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            # Already-compressed files (PDF, Office, images) are stored, not deflated again.
            info.compress_type = zipfile.ZIP_DEFLATED if compressible(mime) else zipfile.ZIP_STORED
            with self.zip.open(info, "w", force_zip64=True) as out:
                out.write(data)
            self._originals.add(name)
        return name

    def add_line(self, member: str, record: dict[str, Any]) -> None:
        """One JSON line of `member` (a .jsonl), kept in a temporary file until `close`: the
        zip takes one entry at a time, and the originals are written meanwhile."""
        out = self._lines.get(member)
        if out is None:
            # closed by close() or abandon()
            out = self._lines[member] = tempfile.TemporaryFile()  # noqa: SIM115
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")

    def close(self, manifest: dict[str, Any]) -> None:
        for member in (DOCUMENTS, CONVERSATIONS, ANSWERS, VECTORS):
            spooled = self._lines.pop(member, None)
            if spooled is None and member != DOCUMENTS:
                continue
            info = zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with self.zip.open(info, "w", force_zip64=True) as out:
                if spooled is not None:
                    spooled.seek(0)
                    shutil.copyfileobj(spooled, out, BLOCK)
                    spooled.close()
        info = zipfile.ZipInfo(MANIFEST, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, json.dumps(manifest, ensure_ascii=False, indent=1))
        self.zip.close()
        self._partial.replace(self.path)

    def abandon(self) -> None:
        for spooled in self._lines.values():
            spooled.close()
        self.zip.close()
        self._partial.unlink(missing_ok=True)


class ArchiveReader:
    """An archive opened for import. `check()` reads all of it once and raises ArchiveError
    for anything it cannot trust; only then are its documents and originals read."""

    def __init__(self, path: Path, *, max_file_bytes: int) -> None:
        """`max_file_bytes`: the target's largest upload, which bounds every original."""
        self.path = path
        self.max_file_bytes = max_file_bytes
        try:
            if not zipfile.is_zipfile(path):
                raise ArchiveError(
                    f"{path.name} is not a Bunko archive (not a zip file, or cut short: "
                    "its end, the zip's directory, is missing)"
                )
            self.zip = zipfile.ZipFile(path)
        except (OSError, zipfile.BadZipFile) as exc:
            raise ArchiveError(f"{path.name} cannot be read: {exc}") from exc
        self.manifest: dict[str, Any] = {}

    def close(self) -> None:
        self.zip.close()

    # -- the checks -------------------------------------------------------------------------

    def check(self, check_path: Callable[[str], str] = str) -> dict[str, Any]:
        """Check everything; returns the manifest. `check_path`: the target's rule for a
        document's path (raises ValidationError for one it would refuse)."""
        infos = self.zip.infolist()
        self._check_entries(infos)
        self.manifest = self._read_manifest()
        hashes = {
            info.filename[len(ORIGINALS) :] for info in infos if info.filename.startswith(ORIGINALS)
        }
        count = 0
        for number, record in enumerate(self.documents(), start=1):
            check_document(record, number, hashes)
            try:
                check_path(record["path"])
            except ValidationError as exc:
                raise ArchiveError(f"documents.jsonl line {number}: {exc}") from exc
            count += 1
        if count != self.manifest["documents"]:
            raise ArchiveError(
                f"documents.jsonl holds {count} documents, the manifest says "
                f"{self.manifest['documents']}: the archive is incomplete"
            )
        for name in sorted(hashes):
            self._check_original(name)
        if CONVERSATIONS in self.zip.NameToInfo:
            for number, record in enumerate(self._lines(CONVERSATIONS), start=1):
                if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
                    raise ArchiveError(f"conversations.jsonl line {number}: not a conversation")
        for number, record in enumerate(self.answers(), start=1):
            check_answer(record, number)
        for number, record in enumerate(self.vectors(), start=1):
            check_vector(record, number)
        return self.manifest

    def _check_entries(self, infos: list[zipfile.ZipInfo]) -> None:
        if len(infos) > MAX_ENTRIES:
            raise ArchiveError(f"the archive holds {len(infos)} entries, more than any library")
        seen: set[str] = set()
        for info in infos:
            name = info.filename
            if name in seen:
                raise ArchiveError(f"the archive names {name!r} twice")
            seen.add(name)
            if name not in _NAMES and not _ORIGINAL.match(name):
                # the names are fixed: anything else (../x, /etc/x, C:\x, a link) is refused
                raise ArchiveError(f"the archive holds an entry Bunko does not write: {name!r}")
            if info.flag_bits & 0x1:
                raise ArchiveError(f"{name}: encrypted entries are not read")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise ArchiveError(f"{name}: an unknown compression")
            limit = (
                MAX_MANIFEST_BYTES
                if name == MANIFEST
                else self.max_file_bytes
                if name.startswith(ORIGINALS)
                else None
            )
            if limit is not None and info.file_size > limit:
                raise ArchiveError(
                    f"{name} is {info.file_size:,} bytes, more than this Bunko takes "
                    f"({limit:,}; BUNKO_MAX_FILE_BYTES bounds an original)"
                )
            if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(
                info.compress_size, 1
            ):
                raise ArchiveError(
                    f"{name} expands {info.file_size // max(info.compress_size, 1):,} times "
                    "(a zip bomb?): refused"
                )
        # Entries whose data overlap share compressed bytes: the trick of the largest bombs.
        spans = sorted((i.header_offset, i.header_offset + i.compress_size) for i in infos)
        for (_, end), (start, _) in itertools.pairwise(spans):
            if start < end:
                raise ArchiveError("the archive's entries overlap (a zip bomb?): refused")
        if MANIFEST not in seen or DOCUMENTS not in seen:
            raise ArchiveError(
                "not a Bunko archive: manifest.json or documents.jsonl is missing "
                "(`bunko export` writes both)"
            )

    def _read_manifest(self) -> dict[str, Any]:
        try:
            manifest = json.loads(self.zip.read(MANIFEST))
        except (ValueError, zipfile.BadZipFile, OSError) as exc:
            raise ArchiveError(f"manifest.json cannot be read: {exc}") from exc
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise ArchiveError("not a Bunko archive: manifest.json names another format")
        version = manifest.get("version")
        if not isinstance(version, int) or version < 1:
            raise ArchiveError("manifest.json: version must be a whole number")
        if version > VERSION:
            raise ArchiveError(
                f"the archive is format version {version}, written by a newer Bunko; this one "
                f"reads up to version {VERSION}: upgrade Bunko to import it"
            )
        library = manifest.get("library")
        if not isinstance(library, dict) or not isinstance(library.get("name"), str):
            raise ArchiveError("manifest.json: the library's name is missing")
        for key, kind in (("members", list), ("sources", list), ("settings", dict)):
            if not isinstance(manifest.get(key, kind()), kind):
                raise ArchiveError(f"manifest.json: {key} is not a {kind.__name__}")
        if not isinstance(manifest.get("documents"), int):
            raise ArchiveError("manifest.json: the count of documents is missing")
        return manifest

    def _check_original(self, content_hash: str) -> None:
        digest = hashlib.sha256()
        try:
            with self.zip.open(original_name(content_hash)) as data:
                while block := data.read(BLOCK):
                    digest.update(block)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise ArchiveError(f"originals/{content_hash} cannot be read: {exc}") from exc
        if digest.hexdigest() != content_hash:
            raise ArchiveError(f"originals/{content_hash}: its bytes do not match their hash")

    # -- reading ------------------------------------------------------------------------------

    def documents(self) -> Iterator[dict[str, Any]]:
        return self._lines(DOCUMENTS)

    def conversations(self) -> Iterator[dict[str, Any]]:
        if CONVERSATIONS not in self.zip.NameToInfo:
            return iter(())
        return self._lines(CONVERSATIONS)

    def answers(self) -> Iterator[dict[str, Any]]:
        return self._lines(ANSWERS) if ANSWERS in self.zip.NameToInfo else iter(())

    def vectors(self) -> Iterator[dict[str, Any]]:
        return self._lines(VECTORS) if VECTORS in self.zip.NameToInfo else iter(())

    def original(self, content_hash: str) -> bytes:
        """One original's bytes (checked by `check`, bounded by the target's upload size)."""
        return self.zip.read(original_name(content_hash))

    def _lines(self, member: str) -> Iterator[dict[str, Any]]:
        try:
            with self.zip.open(member) as stream:
                for number, line in enumerate(_bounded_lines(stream, member), start=1):
                    try:
                        yield json.loads(line)
                    except ValueError as exc:
                        raise ArchiveError(f"{member} line {number}: not JSON") from exc
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise ArchiveError(f"{member} cannot be read: {exc}") from exc


def _bounded_lines(stream: IO[bytes], member: str) -> Iterator[bytes]:
    while True:
        line = stream.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES:
            raise ArchiveError(f"{member}: a line longer than {MAX_LINE_BYTES:,} bytes")
        if line.strip():
            yield line


_REQUIRED = {"path": str, "content_hash": str, "size": int, "source": str, "metadata": dict}


def check_document(record: Any, number: int, hashes: set[str]) -> None:
    """One line of documents.jsonl, as the export writes it."""
    where = f"documents.jsonl line {number}"
    if not isinstance(record, dict):
        raise ArchiveError(f"{where}: not a document")
    for key, kind in _REQUIRED.items():
        if not isinstance(record.get(key), kind) or isinstance(record.get(key), bool):
            raise ArchiveError(f"{where}: {key} is missing or not a {kind.__name__}")
    original = record.get("original")
    if original is not None and (
        original != original_name(record["content_hash"]) or record["content_hash"] not in hashes
    ):
        raise ArchiveError(f"{where}: its original {original!r} is not in the archive")
    try:
        check_metadata(record["metadata"])
    except ValidationError as exc:
        raise ArchiveError(f"{where}: {exc}") from exc
    revisions = record.get("revisions", [])
    if not isinstance(revisions, list) or not all(_valid_revision(r, hashes) for r in revisions):
        raise ArchiveError(f"{where}: its earlier revisions are not originals in the archive")
    items = record.get("items")
    if items is not None and not _valid_items(items):
        raise ArchiveError(f"{where}: items are not spans and edited texts")
    for key in ("category", "mime"):
        if record.get(key) is not None and not isinstance(record[key], str):
            raise ArchiveError(f"{where}: {key} is not text")


def _valid_items(items: Any) -> bool:
    """{"spans": [[index, start, end], ...], "edits": {"index": text}}, as the export writes."""
    if not isinstance(items, dict):
        return False
    spans, edits = items.get("spans", []), items.get("edits", {})
    whole = lambda n: isinstance(n, int) and not isinstance(n, bool) and n >= 0  # noqa: E731
    return (
        isinstance(spans, list)
        and all(isinstance(s, list) and len(s) == 3 and all(map(whole, s)) for s in spans)
        and isinstance(edits, dict)
        and all(k.isdigit() and isinstance(v, str) and v.strip() for k, v in edits.items())
    )


def _valid_revision(revision: Any, hashes: set[str]) -> bool:
    """{"revision": n, "content_hash": h, "original": "originals/h", ...}, oldest first."""
    return (
        isinstance(revision, dict)
        and isinstance(revision.get("content_hash"), str)
        and revision["content_hash"] in hashes
        and revision.get("original") == original_name(revision["content_hash"])
    )


_ANSWER_TEXTS = ("question", "answer")


def check_answer(record: Any, number: int) -> None:
    """One line of answers.jsonl: a question, its answer, what was cited, how it was marked."""
    where = f"answers.jsonl line {number}"
    if not isinstance(record, dict) or not isinstance(record.get("id"), str):
        raise ArchiveError(f"{where}: not an answer")
    if not all(isinstance(record.get(key), str) for key in _ANSWER_TEXTS):
        raise ArchiveError(f"{where}: its question or answer is not text")
    if record.get("mark") not in (None, "up", "down"):
        raise ArchiveError(f"{where}: a mark is up or down")
    if not isinstance(record.get("sources", []), list):
        raise ArchiveError(f"{where}: sources is not a list")
    for key in ("comment", "asker", "marked_by", "conversation_id"):
        if record.get(key) is not None and not isinstance(record[key], str):
            raise ArchiveError(f"{where}: {key} is not text")


def check_vector(record: Any, number: int) -> None:
    """One line of vectors.jsonl: a passage's text and its vector from the named model."""
    vector = record.get("vector") if isinstance(record, dict) else None
    if (
        not isinstance(vector, list)
        or not isinstance(record.get("content"), str)
        or not isinstance(record.get("model"), str)
        or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in vector)
    ):
        raise ArchiveError(f"vectors.jsonl line {number}: not a passage and its vector")
