"""The AWS adapters under the same contract suites, against moto and osmem-server.

`params.py` imports this module only when moto is installed, and runs the OpenSearch param
only when osmem-server is too; otherwise their params show as skipped, with the reason.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bunko.adapters.aws.dynamodb.answers import DynamoDBAnswerStore
from bunko.adapters.aws.dynamodb.audit import DynamoDBAuditStore
from bunko.adapters.aws.dynamodb.identity_links import DynamoDBIdentityLinkStore
from bunko.adapters.aws.dynamodb.libraries import DynamoDBLibraryStore
from bunko.adapters.aws.dynamodb.model_configs import DynamoDBModelConfigStore
from bunko.adapters.aws.dynamodb.research import DynamoDBResearchStore
from bunko.adapters.aws.dynamodb.settings import DynamoDBApiKeyStore, DynamoDBSettingsStore
from bunko.adapters.aws.dynamodb.store import DynamoDBMetadataStore
from bunko.adapters.aws.dynamodb.table import Table
from bunko.adapters.aws.dynamodb.users import DynamoDBLoginAttemptStore, DynamoDBUserStore
from bunko.adapters.aws.s3.blobs import S3BlobStore
from tests.aws.stand_ins import BUCKET, TABLE, moto_aws
from tests.contract.accounts import AccountStores


def _dynamodb_metadata(tmp_path: Path) -> Iterator[DynamoDBMetadataStore]:
    with moto_aws() as aws:
        blobs = S3BlobStore(aws.s3, bucket=BUCKET, prefix="blobs/")
        yield DynamoDBMetadataStore(aws.dynamodb, table_name=TABLE, blobs=blobs)


def _s3_blobs(tmp_path: Path) -> Iterator[S3BlobStore]:
    with moto_aws() as aws:
        yield S3BlobStore(aws.s3, bucket=BUCKET, prefix="blobs/")


class _OneRequestAtATime:
    """A DynamoDB client whose calls run one at a time. DynamoDB applies each request, a
    transaction included, atomically; moto applies a transaction's items one by one without a
    lock, so concurrent tests against it would race inside moto rather than in our code. The
    races that matter (between an adapter's read and its conditional write) still happen."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attr(*args, **kwargs)

        return call


def _dynamodb_accounts(tmp_path: Path) -> Iterator[AccountStores]:
    with moto_aws() as aws:
        table = Table(_OneRequestAtATime(aws.dynamodb), TABLE)
        yield AccountStores(
            users=DynamoDBUserStore(table),
            attempts=DynamoDBLoginAttemptStore(table),
            model_configs=DynamoDBModelConfigStore(table),
            settings=DynamoDBSettingsStore(table),
            api_keys=DynamoDBApiKeyStore(table),
            libraries=DynamoDBLibraryStore(table),
            links=DynamoDBIdentityLinkStore(table),
            audit=DynamoDBAuditStore(table, retention_days=365),
            answers=DynamoDBAnswerStore(table),
        )


def _dynamodb_research(tmp_path: Path) -> Iterator[DynamoDBResearchStore]:
    with moto_aws() as aws:
        yield DynamoDBResearchStore(Table(aws.dynamodb, TABLE))


METADATA_FACTORIES: dict[str, Callable[[Path], Iterator]] = {"dynamodb": _dynamodb_metadata}
BLOB_FACTORIES: dict[str, Callable[[Path], Iterator]] = {"s3": _s3_blobs}
ACCOUNT_FACTORIES: dict[str, Callable[[Path], Iterator]] = {"dynamodb": _dynamodb_accounts}
RESEARCH_FACTORIES: dict[str, Callable[[Path], Iterator]] = {"dynamodb": _dynamodb_research}


_osmem = None


def _osmem_server():
    """One osmem-server per test session (it exits with the test process)."""
    global _osmem
    if _osmem is None:
        import atexit

        from osmem_server import OsmemServer

        _osmem = OsmemServer.start()
        atexit.register(_osmem.close)
    return _osmem


def _opensearch_index(tmp_path: Path, dimension: int | None = 8) -> Iterator:
    """OpenSearch Serverless index against osmem-server. osmem does not execute k-NN, so a
    suite's vector tests must skip this param (tests/aws checks the k-NN request bodies)."""
    from opensearchpy import OpenSearch

    from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex

    with _osmem_server().clone() as clone:
        index = OpenSearchServerlessIndex(
            OpenSearch(hosts=[clone.url]), index="contract", dimension=dimension
        )
        index.ensure_index()
        yield index


SEARCH_INDEX_FACTORIES: dict[str, Callable[..., Iterator]] = {"opensearch": _opensearch_index}
# Capabilities a suite can check before running a test against a param.
NO_KNN = frozenset({"opensearch"})
