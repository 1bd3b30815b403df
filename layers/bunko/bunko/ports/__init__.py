"""The ports: what services need from the outside world, as Protocols, one module a concern.

Services depend on these only; adapters in `bunko.adapters.local` and `bunko.adapters.aws`
implement them, and `bunko.bootstrap` wires one to the other.
"""

from bunko.ports.accounts import LoginAttemptStore, ModelConfigStore, SettingsStore, UserStore
from bunko.ports.apikeys import ApiKeyStore
from bunko.ports.blobs import BlobStore
from bunko.ports.chat import (
    ChatMessage,
    ChatModel,
    ChatRequest,
    ModelResolver,
    ProviderError,
    Reranker,
    RerankHit,
)
from bunko.ports.conversion import DocumentConverter
from bunko.ports.embedding import Embedder, FollowsConfig, LoadsLazily, TrainableEmbedder
from bunko.ports.embedding_generations import (
    DEFAULT_MODEL,
    EmbeddingGeneration,
    EmbeddingGenerations,
    GenerationOpener,
    write_targets,
)
from bunko.ports.identity import TokenVerifier
from bunko.ports.index import IndexEntry, IndexHit, SearchFilter, SearchIndex
from bunko.ports.metadata import (
    ChunkStore,
    DocumentStore,
    DocumentWrite,
    DocumentWrites,
    LibraryTotals,
    MetadataStore,
    WorkspaceStore,
)
from bunko.ports.queue import IngestJob, IngestQueue
from bunko.ports.research import PassageScorer, ResearchStore
from bunko.ports.secrets import SecretCipher

__all__ = [
    "DEFAULT_MODEL",
    "ApiKeyStore",
    "BlobStore",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "ChunkStore",
    "DocumentConverter",
    "DocumentStore",
    "DocumentWrite",
    "DocumentWrites",
    "Embedder",
    "EmbeddingGeneration",
    "EmbeddingGenerations",
    "FollowsConfig",
    "GenerationOpener",
    "IndexEntry",
    "IndexHit",
    "IngestJob",
    "IngestQueue",
    "LibraryTotals",
    "LoadsLazily",
    "LoginAttemptStore",
    "MetadataStore",
    "ModelConfigStore",
    "ModelResolver",
    "PassageScorer",
    "ProviderError",
    "RerankHit",
    "Reranker",
    "ResearchStore",
    "SearchFilter",
    "SearchIndex",
    "SecretCipher",
    "SettingsStore",
    "TokenVerifier",
    "TrainableEmbedder",
    "UserStore",
    "WorkspaceStore",
    "write_targets",
]
