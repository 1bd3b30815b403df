"""A workspace's vectors as rows in one memory-mapped file (float16; int8 for the sketches),
row = slot.

Rows are only ever appended (a replaced chunk gets a new slot), so the file needs no
rewrite to be saved: a snapshot records how many rows it covers and rows past that count
are ignored (and overwritten) after a crash. The file grows by doubling; the unused tail is
sparse. A slot without a vector keeps a zero row.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

MIN_CAPACITY = 4096


class VectorRows:
    def __init__(
        self, path: Path, dimension: int, count: int = 0, dtype: type = np.float16
    ) -> None:
        self.path = path
        self.dimension = dimension
        self.count = count
        self.dtype = np.dtype(dtype)
        self._row_bytes = self.dtype.itemsize * dimension
        self._map: np.memmap | None = None
        self._rows = np.empty((0, dimension), dtype=self.dtype)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        have = path.stat().st_size // self._row_bytes
        if have < count:
            raise ValueError(f"{path.name} holds {have} rows, not {count}")
        self._open(max(MIN_CAPACITY, have))

    def _open(self, capacity: int) -> None:
        if self._map is not None:
            self._map.flush()
        with self.path.open("r+b") as f:
            if f.seek(0, 2) < capacity * self._row_bytes:
                f.truncate(capacity * self._row_bytes)
        self._map = np.memmap(
            self.path, dtype=self.dtype, mode="r+", shape=(capacity, self.dimension)
        )
        # A plain ndarray over the same pages: np.memmap wraps every slice and gather it
        # returns (~10 µs a call, three a search).
        self._rows = self._map.view(np.ndarray)

    @property
    def array(self) -> np.ndarray:
        """Rows [0, count) (a view: valid until the next append)."""
        assert self._map is not None
        return self._rows[: self.count]

    def append(self, matrix: np.ndarray | None, n: int) -> None:
        """Append `n` rows: `matrix`'s (n × dimension) or, for None, zeros."""
        assert self._map is not None
        if self.count + n > len(self._map):
            self._open(max(2 * len(self._map), self.count + n))
        if matrix is None:
            self._map[self.count : self.count + n] = 0
        else:
            self._map[self.count : self.count + n] = matrix
        self.count += n

    def flush(self) -> None:
        if self._map is not None:
            self._map.flush()

    def close(self) -> None:
        self.flush()
        self._map = None
        self._rows = np.empty((0, self.dimension), dtype=self.dtype)  # lets the map go
