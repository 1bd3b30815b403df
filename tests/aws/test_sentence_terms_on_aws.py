"""The relevance gate's sentence readings in the AWS shape's metadata store: DynamoDB (moto,
large values in S3) keeps each chunk's reading beside its text from ingest, and a search reads
no chunk's text for its evidence. A chunk item written before the readings were stored has
none: it is read from its text, with the same similarities. A chunk too large for its reading
beside it under the item limit keeps none. The ingest function, as Lambda loads it, stores
the readings.

The real indexing pipeline and search service with the packaged model (USE, whose row weighs
the evidence). The gate reads the window's chunks from the metadata store whatever engine
found them; the candidates come from the local engine here, because osmem-server (the
OpenSearch stand-in) runs no k-NN, and without vector hits the gate judges by keywords alone
and reads no evidence."""

from __future__ import annotations

import pytest

from bunko import lambda_entry
from bunko.adapters.aws.dynamodb import items
from bunko.adapters.aws.dynamodb.chunks import SPILL_BYTES
from bunko.adapters.aws.dynamodb.store import DynamoDBMetadataStore
from bunko.adapters.aws.s3.blobs import S3BlobStore
from bunko.adapters.collecting_queue import CollectingQueue
from bunko.adapters.local.engine import LocalSearchIndex
from bunko.adapters.local.use_embedder import UniversalSentenceEncoderEmbedder
from bunko.domain import Chunk, Workspace
from bunko.domain.ingest_options import IngestDefaults
from bunko.services.embedding import shared_generation
from bunko.services.ingest import IndexingPipeline, IngestService, UploadPolicy
from bunko.services.search import SearchOptions, SearchService, read_sentences
from bunko.services.search import evidence as evidence_module
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import load_event, load_function, sign_in, upload
from tests.aws.stand_ins import BUCKET, TABLE

WS, BEFORE = "ws-stored", "ws-before"
FILES = {
    "offices.md": "# Offices\n\nThe Osaka office has 24 desks. Visitors sign in at the office "
    "reception on the ground floor.\n\nThe London office has 60 desks and opens at 08:00.",
    "leave.md": "# Leave\n\nEmployees receive 25 days of paid leave a year. Tell your manager "
    "before 10:00 when you are ill.\n\nUnused leave days carry over until March.",
    "travel.md": "# Travel\n\nBook trains in second class. A hotel night abroad may cost up to "
    "180 euros.\n\nThe office manager approves every trip abroad.",
}
QUESTIONS = [
    "How many desks does the Osaka office have?",
    "How many days of paid leave do employees receive?",
    "Can I bring my dog to the office?",  # the library's topic, answered nowhere
    "How much may a hotel night abroad cost?",
]


@pytest.fixture
def shape(aws, tmp_path):
    blobs = S3BlobStore(aws.s3, bucket=BUCKET, prefix="blobs/")
    store = DynamoDBMetadataStore(aws.dynamodb, table_name=TABLE, blobs=blobs)
    embedder = UniversalSentenceEncoderEmbedder()
    index = LocalSearchIndex(tmp_path / "index", dimension=embedder.dimension)
    generations = shared_generation(index, embedder)
    queue = CollectingQueue()
    ingest = IngestService(
        metadata=store,
        blobs=blobs,
        queue=queue,
        generations=generations,
        defaults=IngestDefaults(chunk_size=200, chunk_overlap=0),
        policy=UploadPolicy(max_file_bytes=1_000_000),
    )
    pipeline = IndexingPipeline(
        metadata=store, blobs=blobs, generations=generations, read_sentences=read_sentences
    )
    for ws in (WS, BEFORE):
        store.ensure_workspace(Workspace(id=ws, name=ws))
        for path, text in FILES.items():
            ingest.submit_text(ws, path=path, content=text)
    pipeline.process(queue.take())
    return store, SearchService(metadata=store, generations=generations)


def chunks(store: DynamoDBMetadataStore, ws: str) -> list[Chunk]:
    return [c for d in store.iter_documents(ws) for c in store.get_chunks(ws, d.id)]


def forget_readings(store: DynamoDBMetadataStore, ws: str) -> None:
    """The chunk items as a Bunko before the readings wrote them: no such attribute."""
    for chunk in chunks(store, ws):
        store.table.client.update_item(
            TableName=TABLE,
            Key=items.serialize(items.chunk_key(ws, chunk.id)),
            UpdateExpression="REMOVE sentence_terms",
        )


def similarities(search: SearchService, ws: str, question: str) -> list[tuple]:
    """(path, chunk index, similarity) of every hit, asked with the sentence caches empty
    (`_units` then counts the chunks the gate read from their text)."""
    evidence_module._units.cache_clear()
    evidence_module._stored_units.cache_clear()
    found = search.search(ws, question, SearchOptions(limit=10, min_score=0.0)).items
    return sorted((i.path, i.chunk_index, i.similarity) for i in found)


def test_each_chunk_item_keeps_its_reading_and_a_search_reads_no_text(shape):
    store, search = shape
    stored = chunks(store, WS)
    assert len(stored) >= len(FILES)
    for chunk in stored:
        raw = store.table.get(items.chunk_key(WS, chunk.id))
        assert raw["sentence_terms"] == chunk.sentence_terms == read_sentences(chunk.content)
    for question in QUESTIONS:
        assert similarities(search, WS, question)
        assert evidence_module._units.cache_info().misses == 0, question


def test_items_written_before_the_readings_are_read_from_their_text_alike(shape):
    store, search = shape
    forget_readings(store, BEFORE)
    assert all(c.sentence_terms is None for c in chunks(store, BEFORE))
    for question in QUESTIONS:
        before = similarities(search, BEFORE, question)
        assert evidence_module._units.cache_info().misses > 0, question  # read from text
        assert before == similarities(search, WS, question), question
    # the dog question is refused either way: the evidence, not where it came from, decides
    dog = similarities(search, BEFORE, QUESTIONS[2])
    assert max(s for *_, s in dog) < 0.3


def test_a_chunk_too_large_for_its_reading_keeps_none(shape):
    store, _ = shape
    (doc,) = [d for d in store.iter_documents(WS) if d.path == "offices.md"]
    words = " ".join(f"Room{i} is free." for i in range(15_000))  # ~470 KB with its reading
    assert len(words.encode()) < SPILL_BYTES < len(words) + len(read_sentences(words))
    big = Chunk("c-big", doc.id, WS, doc.revision, 99, words, sentence_terms=read_sentences(words))
    small = Chunk("c-small", doc.id, WS, doc.revision, 98, "The roof has a terrace.")
    small.sentence_terms = read_sentences(small.content)
    for chunk in (big, small):
        store.save_chunk(chunk)
    assert "sentence_terms" not in store.table.get(items.chunk_key(WS, "c-big"))
    by_id = {c.id: c for c in store.get_chunks_by_ids(WS, ["c-big", "c-small"])}
    assert by_id["c-big"].content == words and by_id["c-big"].sentence_terms is None
    assert by_id["c-small"].sentence_terms == small.sentence_terms


def test_the_ingest_function_stores_each_chunks_reading(api_with_accounts, aws_env):
    """The functions as Lambda loads them: an upload through the api function, indexed by the
    ingest function from the queue, leaves each chunk item with its reading."""
    api, ingest = api_with_accounts, load_function("ingest")
    file = upload(api, sign_in(api), "offices.md", FILES["offices.md"].encode())
    [message] = aws_env.receive_all(aws_env.queue_url)
    event = load_event("sqs_ingest_job.json")
    event["Records"][0]["body"] = message["Body"]
    assert ingest.handler(event, FakeLambdaContext()) == {"batchItemFailures": []}

    services = lambda_entry.api_app().state.services
    workspace = services.accounts.auth.users.get_user_by_username("ada").workspace_id
    stored = services.metadata.get_chunks(workspace, file["id"])
    assert stored
    for chunk in stored:
        raw = services.metadata.table.get(items.chunk_key(workspace, chunk.id))
        assert raw["sentence_terms"] == read_sentences(chunk.content)
