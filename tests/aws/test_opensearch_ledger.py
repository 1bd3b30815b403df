"""Deletes that do not miss entries written within the refresh window (point 10).

OpenSearch Serverless makes writes searchable only at its next refresh (about a minute), so
a delete that searches for a chunk's entries misses fresh ones. The stand-in answers
searches at once, so the window is played by hiding every entry from search (as a
collection does before its refresh) while the delete runs; deletes by id still see them.
"""

from __future__ import annotations

from contextlib import contextmanager

from bunko.adapters.aws.dynamodb.table import Table
from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex
from bunko.adapters.aws.opensearch.ledger import IdLedger
from tests.aws.conftest import INDEX
from tests.aws.index_entries import OTHER, WS, entry
from tests.aws.stand_ins import TABLE


@contextmanager
def before_refresh(index: OpenSearchServerlessIndex):
    """Searches see nothing yet, as on a collection before its next refresh."""
    search = index.client.search

    def unrefreshed(*args, **kwargs):
        response = search(*args, **kwargs)
        response["hits"]["hits"] = []
        return response

    index.client.search = unrefreshed
    try:
        yield
    finally:
        index.client.search = search


def test_document_delete_in_the_refresh_window_leaves_no_orphans(ledgered):
    ledgered.index([entry(1, "一つ目"), entry(2, "二つ目"), entry(3, "other", doc="d2")])
    with before_refresh(ledgered):
        ledgered.delete_document(WS, "d1")
    assert ledgered.count(WS) == 1  # d2's entry only


def test_replacing_chunks_in_the_refresh_window_leaves_no_duplicates(ledgered):
    ledgered.index([entry(1, "first version")])
    with before_refresh(ledgered):
        ledgered.index([entry(1, "second version")])  # same chunk id, written again
    assert ledgered.count(WS) == 1
    with before_refresh(ledgered):
        ledgered.delete_chunks(WS, ["c1"])
    assert ledgered.count(WS) == 0


def test_clear_in_the_refresh_window_keeps_other_workspaces(ledgered):
    ledgered.index([entry(1, "mine"), entry(2, "theirs", ws=OTHER)])
    with before_refresh(ledgered):
        ledgered.clear(WS)
    assert ledgered.count(WS) == 0
    assert ledgered.count(OTHER) == 1


def test_without_the_ledger_the_window_would_leave_orphans(aws, opensearch, ledgered):
    # The same delete by search alone: the fresh entries survive (why the ledger exists).
    plain = OpenSearchServerlessIndex(opensearch, index=INDEX, dimension=4)
    plain.index([entry(1, "一つ目")])
    with before_refresh(plain):
        plain.delete_document(WS, "d1")
    assert plain.count(WS) == 1


def test_two_indexes_with_the_same_chunks_keep_their_own_ledgers(aws, opensearch, ledgered):
    # While a workspace's own model is built, each chunk has an entry in the deployment's
    # index and in the model's; deletes in the window reach both, and clearing one (the
    # switch) leaves the other whole.
    table = Table(aws.dynamodb, TABLE)
    model = OpenSearchServerlessIndex(
        opensearch, index=f"{INDEX}-m-cfg1", dimension=4, ledger=IdLedger(table, namespace="cfg1")
    )
    model.ensure_index()
    for index in (ledgered, model):
        index.index([entry(1, "一つ目"), entry(2, "二つ目", doc="d2")])
    with before_refresh(ledgered), before_refresh(model):
        for index in (ledgered, model):
            index.delete_document(WS, "d1")
    assert (ledgered.count(WS), model.count(WS)) == (1, 1)
    with before_refresh(ledgered):
        ledgered.clear(WS)
    assert (ledgered.count(WS), model.count(WS)) == (0, 1)
    with before_refresh(model):
        model.delete_chunks(WS, ["c2"])
    assert model.count(WS) == 0
