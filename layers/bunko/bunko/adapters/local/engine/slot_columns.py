"""Per-slot columns of one workspace: entry key, chunk id, document, category, live.

A slot is an entry's position in the workspace's arrays (the keyword postings and the
vector rows use the same numbering). Keeping the columns as flat arrays lets every filter
become one numpy mask that both engines apply inside their own ranking. Entry keys grow
with the slots, so a key's slot is a binary search away.
"""

from __future__ import annotations

import json
from array import array
from pathlib import Path

import numpy as np

from bunko.ports import SearchFilter


class SlotColumns:
    def __init__(self) -> None:
        self.keys = array("q")
        self.chunk_ids: list[str] = []
        self.live = array("b")
        self.has_vector = array("b")
        self.categories = array("i")
        self.documents = array("i")
        self.category_names: list[str | None] = []
        self.document_names: list[str] = []
        self._category_codes: dict[str | None, int] = {}
        self._document_codes: dict[str, int] = {}
        self.dead = 0

    def __len__(self) -> int:
        return len(self.keys)

    def append(
        self,
        key: int,
        chunk_id: str,
        document_id: str,
        category: str | None,
        has_vector: bool,
    ) -> None:
        if self.keys and key <= self.keys[-1]:
            raise ValueError("entry keys must grow")
        self.keys.append(key)
        self.chunk_ids.append(chunk_id)
        self.live.append(1)
        self.has_vector.append(1 if has_vector else 0)
        self.categories.append(self._code(self._category_codes, self.category_names, category))
        self.documents.append(self._code(self._document_codes, self.document_names, document_id))

    @staticmethod
    def _code(codes: dict, names: list, name) -> int:
        code = codes.get(name)
        if code is None:
            code = codes[name] = len(names)
            names.append(name)
        return code

    def slots_of(self, keys: list[int]) -> list[int]:
        """Live slots of the given entry keys (unknown or dead keys are skipped)."""
        all_keys = np.frombuffer(self.keys, dtype=np.int64)
        if not len(all_keys) or not keys:
            return []
        wanted = np.asarray(keys, dtype=np.int64)
        slots = np.minimum(np.searchsorted(all_keys, wanted), len(all_keys) - 1)
        live = np.frombuffer(self.live, dtype=np.bool_)
        return slots[(all_keys[slots] == wanted) & live[slots]].tolist()

    def kill(self, slot: int) -> None:
        self.live[slot] = 0
        self.dead += 1

    def live_mask(self) -> np.ndarray:
        return np.frombuffer(self.live, dtype=np.bool_)

    def allowed_mask(self, filters: SearchFilter) -> np.ndarray | None:
        """Per slot: live and passing the category and document filters; None when only
        the workspace filters (every live slot is allowed)."""
        if filters.category is None and filters.document_ids is None:
            return None
        mask = self.live_mask().copy()
        if filters.category is not None:
            code = self._category_codes.get(filters.category, -1)
            mask &= np.frombuffer(self.categories, dtype=np.int32) == code
        if filters.document_ids is not None:
            codes = [
                self._document_codes[d] for d in filters.document_ids if d in self._document_codes
            ]
            mask &= np.isin(np.frombuffer(self.documents, dtype=np.int32), codes)
        return mask

    def vector_mask(self) -> np.ndarray:
        return self.live_mask() & np.frombuffer(self.has_vector, dtype=np.bool_)

    # --- persistence ---

    def save(self, directory: Path, new_name) -> str:
        """Write every column to one new .npz file; returns its name."""
        name = new_name() + ".columns.npz"
        tmp = directory / (name + ".tmp")
        with tmp.open("wb") as out:
            np.savez(
                out,
                keys=np.frombuffer(self.keys, dtype=np.int64),
                live=np.frombuffer(self.live, dtype=np.int8),
                has_vector=np.frombuffer(self.has_vector, dtype=np.int8),
                categories=np.frombuffer(self.categories, dtype=np.int32),
                documents=np.frombuffer(self.documents, dtype=np.int32),
                text=np.frombuffer(
                    json.dumps([self.chunk_ids, self.document_names, self.category_names]).encode(
                        "utf-8"
                    ),
                    dtype=np.uint8,
                ),
            )
        tmp.replace(directory / name)
        return name

    @classmethod
    def load(cls, path: Path) -> SlotColumns:
        columns = cls()
        with np.load(path) as saved:
            columns.keys.frombytes(saved["keys"].tobytes())
            columns.live.frombytes(saved["live"].tobytes())
            columns.has_vector.frombytes(saved["has_vector"].tobytes())
            columns.categories.frombytes(saved["categories"].tobytes())
            columns.documents.frombytes(saved["documents"].tobytes())
            text = json.loads(saved["text"].tobytes().decode("utf-8"))
        columns.chunk_ids, columns.document_names, columns.category_names = text
        if not len(columns.keys) == len(columns.live) == len(columns.chunk_ids):
            raise ValueError("the slot columns are torn")
        columns._category_codes = {n: i for i, n in enumerate(columns.category_names)}
        columns._document_codes = {n: i for i, n in enumerate(columns.document_names)}
        columns.dead = len(columns.live) - int(columns.live_mask().sum())
        return columns
