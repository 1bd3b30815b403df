"""`bunko import` refuses an archive it cannot trust with a clear message, exit status 2, and
nothing written: no library made, no document, no member; the refusal is in the audit trail."""

from __future__ import annotations

import hashlib
import json
import struct
import zipfile
from pathlib import Path

import pytest

from bunko.domain.audit import AuditQuery
from bunko.services.accounts import LOCAL_PRINCIPAL
from tests.conftest import make_services
from tests.e2e.cli_harness import run
from tests.e2e.library_move import LIBRARY, PASSWORD, make_library, manifest_with, rewrite

pytestmark = pytest.mark.slow  # a real `bunko import` process a case


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    """A real archive of the handbook (keyword search only: these tests never search)."""
    folder = tmp_path_factory.mktemp("hostile")
    services = make_services(folder / "data", embedder="none")
    try:
        make_library(services)
    finally:
        services.close()
    path = folder / "handbook.zip"
    run(["export", LIBRARY, str(path)], folder / "data")
    return path


def first_document_with(**fields):
    def edit(raw: bytes) -> bytes:
        lines = raw.decode().splitlines()
        lines[0] = json.dumps({**json.loads(lines[0]), **fields})
        return ("\n".join(lines) + "\n").encode()

    return edit


def bomb(out: Path, archive: Path) -> Path:
    """The archive with one more original: 40 MB of zeros (under the largest upload),
    deflated to ~40 KB."""
    zeros = bytes(1 << 20)
    digest = hashlib.sha256()
    for _ in range(40):
        digest.update(zeros)
    rewrite(archive, out)
    name = f"originals/{digest.hexdigest()}"
    with (
        zipfile.ZipFile(out, "a", zipfile.ZIP_DEFLATED) as dst,
        dst.open(name, "w", force_zip64=True) as member,
    ):
        for _ in range(40):
            member.write(zeros)
    return out


def truncated(out: Path, archive: Path) -> Path:
    data = archive.read_bytes()
    out.write_bytes(data[: len(data) // 2])
    return out


def original_swapped(out: Path, archive: Path) -> Path:
    with zipfile.ZipFile(archive) as src:
        name = next(n for n in src.namelist() if n.startswith("originals/"))
    return rewrite(archive, out, change={name: lambda b: b.replace(b"e", b"3")})


def overlapping(out: Path, archive: Path) -> Path:
    """The archive with one original's directory entry pointing at another's data: entries
    that share their bytes (how the largest zip bombs multiply a small file)."""
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as src:
        infos = src.infolist()
        start = src.start_dir
    first = next(i for i in infos if i.filename.startswith("originals/"))
    at = start
    for info in infos:  # the central directory's records, in order
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, at + 28)
        if info.filename.startswith("originals/") and info is not first:
            struct.pack_into("<I", data, at + 42, first.header_offset)
            break
        at += 46 + name_len + extra_len + comment_len
    out.write_bytes(bytes(data))
    return out


CASES = {
    "not a zip": (
        lambda out, a: (out.write_text("just some notes\n"), out)[1],
        "not a Bunko archive",
    ),
    "truncated": (truncated, "cut short"),
    "newer format": (
        lambda out, a: rewrite(a, out, change={"manifest.json": manifest_with(version=99)}),
        "format version 99, written by a newer Bunko",
    ),
    "another format": (
        lambda out, a: rewrite(a, out, change={"manifest.json": manifest_with(format="x")}),
        "manifest.json names another format",
    ),
    "member outside the archive": (
        lambda out, a: rewrite(a, out, add={"../../outside.txt": b"pwned"}),
        "an entry Bunko does not write: '../../outside.txt'",
    ),
    "absolute member": (
        lambda out, a: rewrite(a, out, add={"/etc/cron.d/x": b"pwned"}),
        "an entry Bunko does not write",
    ),
    "document path outside the library": (
        lambda out, a: rewrite(
            a, out, change={"documents.jsonl": first_document_with(path="../../etc/passwd")}
        ),
        "documents.jsonl line 1: invalid path",
    ),
    "zip bomb": (bomb, "a zip bomb?"),
    "overlapping entries": (overlapping, "entries overlap"),
    "an original larger than any upload": (
        lambda out, a: rewrite(a, out, add={"originals/" + "0" * 64: bytes(60 << 20)}),
        "more than this Bunko takes",
    ),
    "original altered": (original_swapped, "do not match their hash"),
    "documents missing": (
        lambda out, a: rewrite(a, out, change={"manifest.json": manifest_with(documents=9)}),
        "the archive is incomplete",
    ),
    "no manifest": (
        lambda out, a: rewrite(a, out, drop={"manifest.json"}),
        "manifest.json or documents.jsonl is missing",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_archive_it_cannot_trust_is_refused_and_nothing_is_written(case, archive, tmp_path):
    make, message = CASES[case]
    hostile = make(tmp_path / "hostile.zip", archive)
    target = tmp_path / "target"
    services = make_services(target, embedder="none")
    services.accounts.auth.create_user("ada", PASSWORD, is_admin=True)
    services.close()

    refused = run(["import", str(hostile)], target, check=False)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert message in refused.stderr and "nothing was imported" in refused.stderr
    assert "Traceback" not in refused.stderr

    services = make_services(target, embedder="none")
    try:
        assert [lib.name for lib in services.accounts.libraries.store.list_libraries()] == []
        assert sum(1 for _ in services.metadata.iter_documents()) == 0
        assert [p for p in (target / "blobs").rglob("*") if p.is_file()] == []
        events = services.audit.read(LOCAL_PRINCIPAL, AuditQuery(action="cli:import")).events
        # as REST records the same refusal (test_rest_moving): outcome_of(400)
        assert [(e.outcome, e.status) for e in events] == [("failed", 400)]
    finally:
        services.close()
