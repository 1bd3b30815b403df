"""Every BlobStore behaves alike."""

from __future__ import annotations

import pytest

from bunko.errors import NotFoundError, ValidationError


def test_put_get_roundtrip_binary(blob_store):
    data = bytes(range(256)) * 10
    blob_store.put("originals/ws/doc/1/file.bin", data)
    assert blob_store.get("originals/ws/doc/1/file.bin") == data
    assert blob_store.exists("originals/ws/doc/1/file.bin")


def test_put_overwrites(blob_store):
    blob_store.put("a/b.txt", b"one")
    blob_store.put("a/b.txt", b"two")
    assert blob_store.get("a/b.txt") == b"two"


def test_missing_blob_raises_not_found(blob_store):
    with pytest.raises(NotFoundError):
        blob_store.get("no/such/key")
    assert not blob_store.exists("no/such/key")


def test_delete_is_idempotent(blob_store):
    blob_store.put("x/y", b"1")
    blob_store.delete("x/y")
    blob_store.delete("x/y")
    assert not blob_store.exists("x/y")


def test_delete_prefix_removes_only_that_prefix(blob_store):
    blob_store.put("originals/ws1/doc1/1/a.txt", b"1")
    blob_store.put("originals/ws1/doc1/2/a.txt", b"2")
    blob_store.put("originals/ws1/doc2/1/a.txt", b"3")
    assert blob_store.delete_prefix("originals/ws1/doc1/") == 2
    assert not blob_store.exists("originals/ws1/doc1/1/a.txt")
    assert blob_store.get("originals/ws1/doc2/1/a.txt") == b"3"


def test_unicode_key(blob_store):
    blob_store.put("originals/ws/文書/資料.txt", "こんにちは".encode())
    assert blob_store.get("originals/ws/文書/資料.txt").decode() == "こんにちは"


@pytest.mark.parametrize("key", ["../escape", "a/../../b", "/abs/path", "", "a/\x00b"])
def test_hostile_keys_are_refused(blob_store, key):
    with pytest.raises(ValidationError):
        blob_store.put(key, b"x")
