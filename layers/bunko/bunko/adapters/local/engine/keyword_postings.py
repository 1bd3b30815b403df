"""One workspace's keyword postings: the vocabulary, each slot's length in terms, and every
(term, slot, term frequency, chunk length) posting, in immutable segments and a small buffer.

New chunks' postings wait in a small unsorted buffer (scanned by queries as is) and are
sealed into a segment every few hundred chunks (`keyword_segments`); saved segments open by
memory map, so a restart re-analyses nothing. A query gathers its terms' postings from every
segment and the buffer in a few vectorised passes; `keyword_index` scores them (BM25).

Slots are dense per-workspace positions handed out by the caller; a removed slot keeps its
postings here (the scorer's masks keep it out of counts and results).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import chain
from pathlib import Path

import numpy as np

from bunko.adapters.local.engine import keyword_segments as segs
from bunko.adapters.local.engine.tuning import MEASURED
from bunko.domain.keyword_analysis import QueryTerm, is_cjk_term

# Terms counted into postings at a time: np.unique's temporaries are several int64 arrays a
# term, so a 10 MB file's 2 million terms at once made the process grow 100 MiB.
ADD_TERMS = 1 << 18


class KeywordPostings:
    def __init__(self, *, pending_postings: int = MEASURED.pending_postings) -> None:
        self.pending_postings = pending_postings  # buffered before a segment is sealed
        self.vocab: list[str] = []  # term id → term
        self._ids = _TermIds(self._new_term)
        self._by_char: dict[str, list[int]] | None = None  # CJK char → term ids; lazy
        self._lengths = array("f")  # terms per slot
        self.segments: list[segs.Segment] = []
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._pending_size = 0
        self._flat: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def slot_count(self) -> int:
        return len(self._lengths)

    @property
    def lengths(self) -> np.ndarray:
        """Every slot's length in terms (a view: valid until the next add)."""
        return np.frombuffer(self._lengths, dtype=np.float32)

    def add_many(self, first_slot: int, documents: Sequence[Sequence[str]]) -> float:
        """Index consecutive new slots from `first_slot` (no gaps), one term list each;
        returns their summed length."""
        if first_slot != len(self._lengths):
            raise ValueError(f"slot {first_slot} out of order (next is {len(self._lengths)})")
        total, start, terms = 0.0, 0, 0
        for end, document in enumerate(documents, 1):
            terms += len(document)
            if terms >= ADD_TERMS or end == len(documents):
                total += self._add(first_slot + start, documents[start:end])
                start, terms = end, 0
        return total

    def _add(self, first_slot: int, documents: Sequence[Sequence[str]]) -> float:
        # map over a C-level method: no Python frame per term (the hot loop of ingest).
        gids = np.fromiter(map(self._ids.__getitem__, chain.from_iterable(documents)), np.int64)
        lengths = np.fromiter((len(d) for d in documents), dtype=np.int64, count=len(documents))
        self._lengths.frombytes(lengths.astype(np.float32).tobytes())
        total = float(lengths.sum())
        if not len(gids):
            return total
        n = len(documents)
        docs = np.repeat(np.arange(n, dtype=np.int64), lengths)
        pairs, tfs = np.unique(gids * n + docs, return_counts=True)
        term_ids, local = np.divmod(pairs, n)
        self._pending.append((term_ids, (local + first_slot).astype(np.int32), tfs))
        self._pending_size += len(pairs)
        self._flat = None
        if self._pending_size >= self.pending_postings:
            self.seal()
        return total

    def _new_term(self, term: str) -> int:
        gid = len(self.vocab)
        self.vocab.append(term)
        if self._by_char is not None and is_cjk_term(term):
            for char in set(term):
                self._by_char.setdefault(char, []).append(gid)
        return gid

    def seal(self) -> None:
        """Turn the buffered postings into a segment, merging while sizes are alike."""
        if not self._pending:
            return
        gids, slots, tfs = self._pending_flat()
        self.segments.append(segs.build(gids, slots, tfs, self.lengths, len(self.vocab)))
        self._pending, self._pending_size, self._flat = [], 0, None
        while len(self.segments) >= 2 and self.segments[-2].size <= 2 * self.segments[-1].size:
            merged = segs.merge(self.segments[-2:], len(self.vocab))
            self.segments[-2:] = [merged]

    def _pending_flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._flat is None:
            parts = self._pending or [segs.EMPTY]
            self._flat = tuple(np.concatenate([p[i] for p in parts]) for i in range(3))
        return self._flat

    # --- a query's postings ---

    def gather(
        self, terms: list[QueryTerm]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every posting of the query's terms, dead slots too, as runs of one query unit:
        (each run's unit, each run's length, then per posting: slot, tf, chunk length), and
        each unit's postings (its df if nothing is dead or expands). A run's postings share
        a unit, so per-unit values spread over them by np.repeat (a tenth of a gather)."""
        units, gids = self._query_pairs(terms)
        if not len(gids):
            none = np.empty(0, np.int64)
            empty_lens, df = np.empty(0, np.uint16), np.zeros(len(terms), dtype=np.int64)
            return none, none, *segs.EMPTY[1:], empty_lens, df
        found, owners, lengths = self._ranges(units, gids)
        pending = self._gather_pending(units, gids)
        pending_lens = segs.lens_of(pending[1], self.lengths)
        run_units = np.concatenate([owners, pending[0]])
        runs = np.concatenate([lengths, np.ones(len(pending[0]), dtype=np.int64)])
        slot, tf = (np.concatenate([*(part[i] for part in found), pending[i]]) for i in (1, 2))
        lens = np.concatenate([*(part[3] for part in found), pending_lens])
        return run_units, runs, slot, tf, lens, _counts(owners, lengths, pending[0], len(terms))

    def counts(self, terms: list[QueryTerm]) -> np.ndarray:
        """Each query unit's postings, read off the segments' ranges and the buffer without
        gathering them (its df when nothing is dead or expands)."""
        units, gids = self._query_pairs(terms)
        _, owners, lengths = self._ranges(units, gids)
        return _counts(owners, lengths, self._gather_pending(units, gids)[0], len(terms))

    def _ranges(self, units: np.ndarray, gids: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
        """The pairs' postings in every segment (views: nothing copied), with each range's
        query unit and length."""
        found = [part for seg in self.segments for part in segs.ranges(seg, units, gids)]
        owners = np.asarray([part[0] for part in found], dtype=np.int64)
        return found, owners, np.asarray([len(part[1]) for part in found], dtype=np.int64)

    def _query_pairs(self, terms: list[QueryTerm]) -> tuple[np.ndarray, np.ndarray]:
        """(query unit, term id) pairs: one per plain term, one per expanded term's match."""
        units: list[int] = []
        gids: list[int] = []
        for position, term in enumerate(terms):
            if term.expand:
                matched = self._chars().get(term.text, [])
            else:
                gid = self._ids.get(term.text)
                matched = [] if gid is None else [gid]
            units += [position] * len(matched)
            gids += matched
        return np.asarray(units, dtype=np.int64), np.asarray(gids, dtype=np.int64)

    def _chars(self) -> dict[str, list[int]]:
        if self._by_char is None:  # built on the first one-character CJK query
            by_char: dict[str, list[int]] = {}
            for gid, term in enumerate(self.vocab):
                if is_cjk_term(term):
                    for char in set(term):
                        by_char.setdefault(char, []).append(gid)
            self._by_char = by_char
        return self._by_char

    def _gather_pending(
        self, units: np.ndarray, gids: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return scan(*self._pending_flat(), units, gids) if self._pending else segs.EMPTY

    # --- persistence ---

    def save(self, directory: Path, new_name) -> dict:
        """Seal, write unsaved segments (named by `new_name()`), the vocabulary and lengths;
        returns the manifest part that `load_postings` takes back."""
        self.seal()
        self.segments = [
            seg if seg.name else segs.save(seg, directory, new_name()) for seg in self.segments
        ]
        vocab_file = new_name() + ".vocab"
        (directory / vocab_file).write_text("\n".join(self.vocab), encoding="utf-8")
        lengths_file = new_name() + ".lengths.npy"
        segs.write_npy(directory / lengths_file, np.frombuffer(self._lengths, dtype=np.float32))
        return {
            "segments": [s.name for s in self.segments],
            "vocab": vocab_file,
            "vocab_size": len(self.vocab),
            "lengths": lengths_file,
        }

    def files(self, part: dict) -> list[str]:
        return [f for name in part["segments"] for f in segs.files(name)] + [
            part["vocab"],
            part["lengths"],
        ]

    @classmethod
    def load_postings(
        cls, directory: Path, part: dict, *, pending_postings: int = MEASURED.pending_postings
    ):
        """The postings saved as `part` (segments memory-mapped)."""
        index = cls(pending_postings=pending_postings)
        text = (directory / part["vocab"]).read_text(encoding="utf-8")
        index.vocab = text.split("\n") if text else []
        if len(index.vocab) != part["vocab_size"]:
            raise ValueError("the vocabulary is torn")
        index._ids.update((term, gid) for gid, term in enumerate(index.vocab))
        lengths = np.load(directory / part["lengths"])
        index._lengths.frombytes(lengths.astype(np.float32).tobytes())
        index.segments = [segs.load(directory, name, index.lengths) for name in part["segments"]]
        return index


def scan(
    gids: np.ndarray, slots: np.ndarray, tfs: np.ndarray, units: np.ndarray, wanted: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unit, slot, tf) of the unsorted postings (`gids`, `slots`, `tfs`: a buffer not yet
    sealed) whose term is among the (unit, term id) pairs (`units`, `wanted`)."""
    order = np.argsort(wanted, kind="stable")
    sorted_gids = wanted[order]
    hit = np.flatnonzero(np.isin(gids, sorted_gids))
    lo = np.searchsorted(sorted_gids, gids[hit], "left")
    count = np.searchsorted(sorted_gids, gids[hit], "right") - lo
    total = int(count.sum())
    which = np.repeat(lo - (np.cumsum(count) - count), count) + np.arange(total)
    rows = np.repeat(hit, count)
    return units[order][which], slots[rows], tfs[rows]


def _counts(owners: np.ndarray, lengths: np.ndarray, pending: np.ndarray, n: int) -> np.ndarray:
    """Postings per query unit (of `n`): the segments' ranges (`owners`' `lengths`) and the
    buffer's postings (their units, `pending`)."""
    return np.bincount(owners, weights=lengths, minlength=n) + np.bincount(pending, minlength=n)


class _TermIds(dict):
    """term → id; an unknown term looked up with [] gets the next id (one hash lookup for
    the common, known term; `.get` never adds)."""

    def __init__(self, new_term) -> None:
        super().__init__()
        self._new_term = new_term

    def __missing__(self, term: str) -> int:
        gid = self[term] = self._new_term(term)
        return gid
