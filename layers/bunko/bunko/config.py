"""Settings, read from the environment (prefix BUNKO_) and an optional .env file."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "BUNKO_"

# Chunking defaults (characters). Documented in README; overridable per upload.
DEFAULT_CHUNK_SIZE = 1000
DEFAULT_CHUNK_OVERLAP = 200


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_file=".env", extra="ignore")

    backend: Literal["local", "aws"] = "local"
    data_dir: Path = Path("data")

    # servers
    host: str = "127.0.0.1"
    port: int = 3000
    mcp_port: int = 3001
    watch: bool = True  # watch the drop folder in `bunko serve`

    # auth: "off" is for a single local user and is refused on a non-loopback address
    auth: Literal["on", "off"] = "on"

    # models
    embedder: Literal["use", "lsa", "e5", "none"] = "use"
    embed_batch_size: int = Field(default=64, ge=1, le=4096)
    lsa_dimension: int = Field(default=256, ge=2, le=2048)

    # ingest
    chunk_size: int = Field(default=DEFAULT_CHUNK_SIZE, ge=50, le=20000)
    chunk_overlap: int = Field(default=DEFAULT_CHUNK_OVERLAP, ge=0, le=10000)
    max_file_bytes: int = 50 * 1024 * 1024

    # search
    fusion: Literal["convex", "rrf", "max", "keyword", "vector"] = "convex"
    vector_weight: float = Field(default=0.3, ge=0.0, le=1.0)
    search_limit: int = 5
    min_score: float = 0.3
    candidates: int = Field(default=100, ge=1, le=1000)

    @cached_property
    def drop_dir(self) -> Path:
        return self.data_dir / "drop"

    @cached_property
    def blob_dir(self) -> Path:
        return self.data_dir / "blobs"

    @cached_property
    def metadata_path(self) -> Path:
        return self.data_dir / "bunko.db"

    @cached_property
    def index_dir(self) -> Path:
        return self.data_dir / "index"
