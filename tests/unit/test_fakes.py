"""The fakes in tests/fakes.py offer every member of the port they stand in for, so a service
test on a fake cannot pass by calling something the real adapters lack (or miss one they have)."""

from __future__ import annotations

import inspect

import pytest

from bunko.ports import BlobStore, Embedder, IngestQueue, MetadataStore, SearchIndex
from bunko.services.search.search import SearchDefaults
from tests.fakes import (
    FakeBlobStore,
    FakeEmbedder,
    FakeMetadataStore,
    FakeQueue,
    FakeSearchDefaults,
    FakeSearchIndex,
)


def _members(protocol: type) -> dict[str, inspect.Signature | None]:
    found: dict[str, inspect.Signature | None] = {}
    for klass in protocol.__mro__:
        if klass is object or not getattr(klass, "_is_protocol", False):
            continue
        found.update({name: None for name in getattr(klass, "__annotations__", {})})
        for name, value in vars(klass).items():
            if not name.startswith("_") and callable(value):
                found[name] = inspect.signature(value)
    return found


@pytest.mark.parametrize(
    ("port", "fake"),
    [
        (MetadataStore, FakeMetadataStore()),
        (BlobStore, FakeBlobStore()),
        (SearchIndex, FakeSearchIndex(dimension=None)),
        (Embedder, FakeEmbedder(["a"])),
        (IngestQueue, FakeQueue()),
        (SearchDefaults, FakeSearchDefaults({}, fallback=(5, 0.3))),
    ],
)
def test_fake_has_every_member_of_its_port(port, fake):
    for name, signature in _members(port).items():
        assert hasattr(fake, name), f"{type(fake).__name__} lacks {name}"
        if signature is not None:
            theirs = list(signature.parameters)[1:]  # without self
            assert list(inspect.signature(getattr(fake, name)).parameters) == theirs, name
