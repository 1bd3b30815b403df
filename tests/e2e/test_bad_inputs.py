"""Bad inputs, named (issue 13, point 8), against a real server with the default limits: each
gets a clear 4xx in aurak's error shape or ends `failed` with a reason (or is read correctly);
memory stays bounded; nothing else changes."""

from __future__ import annotations

import asyncio
import io
import unicodedata

import pytest
from pypdf import PdfWriter

from bunko.domain.auth import SCOPE_READ, SCOPE_WRITE
from tests.e2e.mcp_harness import http_client, payload
from tests.e2e.rest_harness import assert_error, serve, wait_until_done
from tests.security.memory import RssGrowth

pytestmark = pytest.mark.slow  # large and hostile files through the whole ingest

MIB = 1024 * 1024
KEEPER = b"The keeper's log survives every bad upload."


@pytest.fixture(scope="module")
def kept_file(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("bad-inputs") / "data") as rest:  # default 50 MiB limit
        user = rest.new_user()
        kept = user.client.post("/upload", files={"file": ("keeper.txt", KEEPER, "text/plain")})
        assert wait_until_done(user.client, kept.json()["id"])["status"] == "completed"
        yield rest, user, kept.json()["id"]
        # Nothing a bad input did touched the file that was there before.
        after = user.client.get(f"/knowledge-bases/{kept.json()['id']}").json()
        assert (after["status"], after["revision"]) == ("completed", 1)


def upload(user, name: str, data: bytes, content_type: str = "application/octet-stream"):
    if "\x00" in name:  # httpx escapes a NUL in a file name; send it as a client could
        return _raw_upload(user, name.encode(), data)
    return user.client.post("/upload", files={"file": (name, data, content_type)})


def _raw_upload(user, name: bytes, data: bytes):
    boundary = b"bunkoboundary"
    body = b"".join([
        b"--" + boundary + b"\r\n",
        b'Content-Disposition: form-data; name="file"; filename="' + name + b'"\r\n',
        b"Content-Type: text/plain\r\n\r\n", data, b"\r\n--" + boundary + b"--\r\n",
    ])  # fmt: skip
    headers = {"content-type": "multipart/form-data; boundary=" + boundary.decode()}
    return user.client.post("/upload", content=body, headers=headers)


def files(user) -> int:
    return len(user.client.get("/knowledge-bases").json())


@pytest.mark.parametrize(
    ("name", "data", "status"),
    [
        ("empty.txt", b"", 400),
        ("big.txt", b"a" * (50 * MIB + 1), 413),
        ("nul\x00name.txt", b"text", 400),
        ("x" * 300 + ".txt", b"text", 400),
        ("picture.png", b"\x89PNG\r\n\x1a\n" + bytes(64), 415),
    ],
    ids=["0-byte", "50MiB+1", "NUL-in-name", "300-char-name", "unsupported-type"],
)
def test_refused_uploads_are_4xx_and_store_nothing(kept_file, name, data, status):
    _, user, _ = kept_file
    before = files(user)
    assert_error(upload(user, name, data), status)
    assert files(user) == before


def _blank_pdf(pages: int) -> bytes:
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


CASES = {
    "pdf-10000-blank-pages": ("blank.pdf", lambda: _blank_pdf(10_000), "no text"),
    "csv-one-10MB-line": ("wide.csv", lambda: b"cell," * (2 * MIB) + b"\n", None),
    "csv-10MB-of-rows": ("tall.csv", lambda: b"cell,cell,cell,cell,cell\n" * (MIB * 2 // 5), None),
    "invalid-utf8": ("bad.txt", lambda: b"caf\xc3 \xff\xfe broken \xc0\xaf bytes " * 64, None),
    "utf16-no-bom": ("u16.txt", lambda: ("日本語の本文。" * 200).encode("utf-16-le"), None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hard_files_end_completed_or_failed_with_a_reason(kept_file, case):
    _, user, _ = kept_file
    name, make, reason = CASES[case]
    data = make()
    with RssGrowth() as rss:
        response = upload(user, name, data)
        assert response.status_code == 201, response.text
        done = wait_until_done(user.client, response.json()["id"], timeout=300)  # shared CPUs
    if done["status"] == "failed" or reason:
        assert done["status"] == "failed" and done["error"], done
        assert reason is None or reason in done["error"]
        assert "Traceback" not in done["error"]
    else:
        assert done["status"] == "completed" and done["chunkCount"] >= 1
    rose = rss.growth // MIB
    print(f"{case}: memory rose {rose} MiB at its peak")
    # 10 MB files: the CSVs rose 424 and 164 MiB before their rows were read in pieces, the
    # chunker packed as it went and the keyword index counted postings in slices; 56 and 66 now.
    assert rose < 128, f"memory rose {rose} MiB while one {len(data) // MIB} MiB file was read"


def test_a_client_path_is_reduced_to_its_name(kept_file):
    _, user, _ = kept_file
    response = upload(user, "../../etc/passwd.txt", b"not a system file", "text/plain")
    assert response.status_code == 201
    assert response.json()["name"] == "passwd.txt"


def test_nfc_and_nfd_twins_are_one_name(kept_file):
    _, user, _ = kept_file
    nfc, nfd = unicodedata.normalize("NFC", "が.txt"), unicodedata.normalize("NFD", "が.txt")
    assert nfc != nfd
    first = upload(user, nfc, "かな文字".encode(), "text/plain").json()
    again = upload(user, nfd, "かな文字".encode(), "text/plain").json()
    other = upload(user, nfd, "別の文字".encode(), "text/plain").json()
    assert again["id"] == first["id"] and first["name"] == nfc
    assert other["id"] != first["id"] and other["name"] == "が (2).txt"


def test_a_100MB_json_body_is_refused_unread(kept_file):
    _, user, _ = kept_file

    def body():
        yield b'{"name": "'
        for _ in range(100):
            yield b"a" * MIB
        yield b'"}'

    response = user.client.post(
        "/model-configs", content=body(), headers={"content-type": "application/json"}
    )
    assert_error(response, 413)
    assert user.client.get("/model-configs").json() == []


def test_deeply_nested_json_is_a_4xx(kept_file):
    _, user, _ = kept_file
    depth = 100_000
    nested = b'{"temperature": ' + b"[" * depth + b"]" * depth + b"}"
    response = user.client.put(
        "/user-settings", content=nested, headers={"content-type": "application/json"}
    )
    assert 400 <= response.status_code < 500, response.text[:200]
    assert_error(response, response.status_code)


async def _mcp_twins_and_paths(url: str, key: str) -> None:
    async with http_client(url, key) as client:
        bad = ["../outside.txt", "a/\x00/b.txt", "x" * 2000, "/"]
        for path in bad:
            result = await client.call_tool("add_item_text", {"content": "t", "path": path})
            assert result.is_error, path
        nfc = unicodedata.normalize("NFC", "ノート/が.md")
        nfd = unicodedata.normalize("NFD", "ノート/が.md")
        one = payload(await client.call_tool("add_item_text", {"content": "一", "path": nfc}))
        two = payload(await client.call_tool("add_item_text", {"content": "二", "path": nfd}))
        assert two["document_id"] == one["document_id"] and two["revision"] == 2
        count = payload(await client.call_tool("get_document_count", {}))
        assert count["count"] == 1


def test_mcp_paths_refused_and_unicode_twins_one_document(kept_file):
    rest, _, _ = kept_file
    import uuid

    key = rest.services.apikeys.create(
        workspace_id=str(uuid.uuid4()), scopes=(SCOPE_READ, SCOPE_WRITE)
    )[1]
    asyncio.run(_mcp_twins_and_paths(rest.url, key))
