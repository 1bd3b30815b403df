"""S3 notifications and drop keys: parsing the real event shapes in events/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bunko.adapters.aws.s3.drops import (
    DropTarget,
    category_from_metadata,
    category_metadata,
    drop_key,
    locate,
    parse_notifications,
)
from bunko.domain import DEFAULT_WORKSPACE_ID

EVENTS = Path(__file__).resolve().parents[2] / "events"


def sqs_bodies(name: str) -> list[dict]:
    event = json.loads((EVENTS / name).read_text(encoding="utf-8"))
    return [json.loads(r["body"]) for r in event["Records"]]


def test_object_created_event():
    [body] = sqs_bodies("sqs_s3_object_created.json")
    [event] = parse_notifications(body)
    assert event.kind == "created"
    assert event.key == "drop/default/manuals/検索 guide.md"  # URL-decoded, '+' is a space
    assert event.bucket == "bunko-test"
    assert event.version_id


def test_object_removed_and_test_events():
    [removed] = parse_notifications(sqs_bodies("sqs_s3_object_removed.json")[0])
    assert removed.kind == "removed"
    assert parse_notifications(sqs_bodies("sqs_s3_test_event.json")[0]) == []
    assert parse_notifications({"type": "something else"}) is None


@pytest.mark.parametrize(
    ("key", "target"),
    [
        (
            "drop/default/manuals/guide.pdf",
            DropTarget(DEFAULT_WORKSPACE_ID, "manuals/guide.pdf", "manuals"),
        ),
        ("drop/ws-1/a/b/c.txt", DropTarget("ws-1", "a/b/c.txt", "a")),
        ("drop/ws-1/top.md", DropTarget("ws-1", "top.md", None)),
        ("drop/ws-1/folder/", None),
        ("drop/ws-1/.hidden/x.txt", None),
        ("drop/ws-1/~$lock.docx", None),
        ("drop/ws-1/upload.part", None),
        ("drop/only-workspace", None),
        ("blobs/originals/x", None),
    ],
)
def test_locate(key, target):
    assert locate(key, drop_prefix="drop/") == target


def test_drop_key_is_the_inverse_of_locate():
    key = drop_key(drop_prefix="drop/", workspace_id="ws-1", path="資料/報告.pdf")
    assert locate(key, drop_prefix="drop/") == DropTarget("ws-1", "資料/報告.pdf", "資料")


def test_category_metadata_survives_ascii_only_headers():
    metadata = category_metadata("マニュアル")
    assert metadata["bunko-category"].isascii()
    assert category_from_metadata(metadata) == "マニュアル"
    assert category_from_metadata({}) is None
