"""ChosenGenerations: the EmbeddingGenerations of the embedded shape, from each workspace's saved
choice (a settings document, scope "embedding-model"), and SharedGeneration: every workspace on the
server's default model (AWS, a service built without generations).

The saved document: {"serving": model, "building": model or null}, a model being "default"
(the server's own) or a model config id; no document: served by the default. Generations of model
configs are opened once, on first use, and kept (an embedder client and an index); the
embedder follows its config's key (config_embedder.ConfigEmbedder).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bunko.domain import Document
from bunko.domain.metadata import terms_of
from bunko.ports import (
    DEFAULT_MODEL,
    Embedder,
    EmbeddingGeneration,
    EmbeddingGenerations,
    FollowsConfig,
    GenerationOpener,
    SearchIndex,
    SettingsStore,
    write_targets,
)

SCOPE = "embedding-model"


class SharedGeneration:
    """One generation for every workspace."""

    def __init__(self, default: EmbeddingGeneration) -> None:
        self.default = default
        self._lock = threading.RLock()

    def chosen(self, workspace_id: str) -> EmbeddingGeneration:
        return self.default

    def serving(self, workspace_id: str) -> EmbeddingGeneration:
        return self.chosen(workspace_id)

    def building(self, workspace_id: str) -> EmbeddingGeneration | None:
        return None

    def followers(self, workspace_id: str) -> list[EmbeddingGeneration]:
        return []

    def models(self, workspace_id: str) -> set[str]:
        """What the workspace embeds with now: DEFAULT_MODEL or a config id, and the one
        being built."""
        return {DEFAULT_MODEL}

    @contextmanager
    def steady(self) -> Iterator[None]:
        with self._lock:
            yield


class ChosenGenerations(SharedGeneration):
    def __init__(
        self, default: EmbeddingGeneration, store: SettingsStore, opener: GenerationOpener
    ) -> None:
        super().__init__(default)
        self.store = store
        self.opener = opener
        self._opened: dict[tuple[str, str], EmbeddingGeneration] = {}
        # Not the `steady` lock: a search must not wait for a write that is embedding.
        self._opening = threading.Lock()

    # The saved choice.
    def state(self, workspace_id: str) -> dict[str, Any]:
        saved = self.store.get_settings(SCOPE, workspace_id) or {}
        return {"serving": saved.get("serving") or DEFAULT_MODEL, "building": saved.get("building")}

    def models(self, workspace_id: str) -> set[str]:
        state = self.state(workspace_id)
        return {state["serving"], *([state["building"]] if state["building"] else [])}

    def save_state(self, workspace_id: str, state: dict[str, Any]) -> None:
        with self._lock:
            if state["serving"] == DEFAULT_MODEL and state["building"] is None:
                self.store.delete_settings(SCOPE, workspace_id)
            else:
                self.store.put_settings(SCOPE, workspace_id, state)

    def all_states(self) -> list[tuple[str, dict[str, Any]]]:
        return [(ws, self.state(ws)) for ws, _ in self.store.list_settings(SCOPE)]

    # The generations.
    def generation(self, workspace_id: str, model: str) -> EmbeddingGeneration:
        """The generation of `model` (a config id, or DEFAULT_MODEL: the server's default)."""
        if model == DEFAULT_MODEL:
            return self.default
        key = (workspace_id, model)
        with self._opening:
            if key not in self._opened:
                self._opened[key] = self.opener(workspace_id, model)
            return self._opened[key]

    def chosen(self, workspace_id: str) -> EmbeddingGeneration:
        return self.generation(workspace_id, self.state(workspace_id)["serving"])

    def building(self, workspace_id: str) -> EmbeddingGeneration | None:
        building = self.state(workspace_id)["building"]
        return None if building is None else self.generation(workspace_id, building)

    def refresh(self, workspace_id: str, model: str) -> None:
        """The model's config was saved (a new key): its embedder reads it again at its next
        use. The generation and its index stay: a config in use keeps its model."""
        with self._opening:
            generation = self._opened.get((workspace_id, model))
        if generation is not None and isinstance(generation.embedder, FollowsConfig):
            generation.embedder.refresh()

    def forget(self, workspace_id: str, model: str) -> None:
        """Drop an opened generation (its endpoint failed the probe when it was chosen)."""
        with self._opening:
            self._opened.pop((workspace_id, model), None)


def shared_generation(index: SearchIndex, embedder: Embedder | None) -> SharedGeneration:
    """Every workspace on one model and index (a service built without generations)."""
    return SharedGeneration(EmbeddingGeneration(DEFAULT_MODEL, embedder, index))


def delete_document_everywhere(
    generations: EmbeddingGenerations, workspace_id: str, doc_id: str
) -> None:
    """Remove a document from every generation the workspace writes (two while its model
    changes), held steady."""
    with generations.steady():
        for target in write_targets(generations, workspace_id):
            target.index.delete_document(workspace_id, doc_id)


def relabel_document_everywhere(generations: EmbeddingGenerations, document: Document) -> None:
    """Give the document's entries its metadata terms now (after an edit of its metadata or
    category) in every generation the workspace writes, held steady."""
    terms = terms_of(document.metadata, document.category)
    with generations.steady():
        for target in write_targets(generations, document.workspace_id):
            target.index.relabel_document(document.workspace_id, document.id, terms)
