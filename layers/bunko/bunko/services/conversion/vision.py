"""VisionAdvisor: aurak's recommend-mode — fast (text extraction) or precise (a vision
model reads page images) for a file, with the reason, cost, time and warnings.

The signal is the file's type, its size and, for a PDF already uploaded, how much text
its pages carry: pages with little or no text are scans that only a vision model reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from bunko.domain import Document, DocumentStatus
from bunko.errors import BunkoError, ValidationError
from bunko.parsing import is_supported, parse
from bunko.ports import BlobStore, MetadataStore, ModelConfigStore
from bunko.services.conversion.vision_messages import message
from bunko.services.ingest import normalise_path

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"})
SCANNED_CHARS_PER_PAGE = 200  # below this a page is mostly picture
SCANNED_EMPTY_SHARE = 0.3  # or when this share of pages has no text at all
LARGE_PDF_BYTES = 10 * 1024 * 1024
BYTES_PER_SCANNED_PAGE = 100 * 1024  # to guess a page count from the size
COST_PER_PAGE = 0.004  # USD: ~1.5k image tokens per page at a common vision-model price
SECONDS_PER_PAGE = 5.0
FAST_SECONDS_PER_MB = 0.5
_STATS_CACHE_SIZE = 256


@dataclass
class Recommendation:
    mode: str
    reason: str
    estimated_cost: float  # USD
    estimated_seconds: float
    warnings: list[str] = field(default_factory=list)
    pages: int | None = None
    chars_per_page: int | None = None


@dataclass(frozen=True)
class _PdfStats:
    pages: int
    chars_per_page: int
    empty_share: float


class VisionAdvisor:
    def __init__(
        self,
        *,
        metadata: MetadataStore,
        blobs: BlobStore,
        model_configs: ModelConfigStore,
        max_file_bytes: int,
    ) -> None:
        self.metadata = metadata
        self.blobs = blobs
        self.model_configs = model_configs
        self.max_file_bytes = max_file_bytes
        self._stats: dict[tuple[str, int], _PdfStats] = {}

    def recommend(
        self, workspace_id: str, *, file: str, size: int | None, language: str
    ) -> Recommendation:
        path = normalise_path(file)
        if size is not None and size < 0:
            raise ValidationError("size: must be 0 or more")
        doc = self.metadata.get_document_by_path(workspace_id, path)
        size = size if size is not None else (doc.size if doc else 0)
        suffix = PurePosixPath(path).suffix.lower()
        pages: int | None = None
        chars: int | None = None
        warnings: list[str] = []
        if suffix in IMAGE_SUFFIXES:
            mode, reason, pages = "precise", message("image", language), 1
        elif suffix == ".pdf":
            stats = self._pdf_stats(workspace_id, doc) if doc else None
            if doc and doc.status is DocumentStatus.FAILED and "no text" in (doc.error or ""):
                mode, reason = "precise", message("pdf_no_text", language)
            elif stats:
                pages, chars = stats.pages, stats.chars_per_page
                scanned = chars < SCANNED_CHARS_PER_PAGE or stats.empty_share > SCANNED_EMPTY_SHARE
                mode = "precise" if scanned else "fast"
                reason = message("pdf_scanned" if scanned else "pdf_text", language, chars=chars)
            else:
                mode = "precise" if size > LARGE_PDF_BYTES else "fast"
                reason = message("pdf_large" if mode == "precise" else "pdf_unknown", language)
                warnings.append(message("warn_not_uploaded", language))
            pages = pages or max(1, size // BYTES_PER_SCANNED_PAGE)
        elif is_supported(path):
            mode, reason = "fast", message("text_file", language)
        else:
            mode, reason = "fast", message("unsupported", language)
        if mode == "precise":
            warnings[:0] = [message("warn_slow", language), message("warn_cost", language)]
            if not any(
                c.supports_vision for c in self.model_configs.list_model_configs(workspace_id)
            ):
                warnings.append(message("warn_no_vision_model", language))
        if size > self.max_file_bytes:
            warnings.append(
                message("warn_too_large", language, limit=self.max_file_bytes // (1024 * 1024))
            )
        return Recommendation(
            mode=mode,
            reason=reason,
            estimated_cost=round((pages or 1) * COST_PER_PAGE, 4) if mode == "precise" else 0.0,
            estimated_seconds=self._seconds(mode, size, pages),
            warnings=warnings,
            pages=pages,
            chars_per_page=chars,
        )

    def _pdf_stats(self, workspace_id: str, doc: Document) -> _PdfStats | None:
        """Pages with text and characters per page, from the uploaded original (the
        parser reports a span per page that has text). Cached per revision."""
        if doc.status is not DocumentStatus.COMPLETED or not doc.blob_key:
            return None
        cache_key = (doc.id, doc.revision)
        if cache_key not in self._stats:
            try:
                parsed = parse(self.blobs.get(doc.blob_key), filename=doc.name, mime=doc.mime)
            except BunkoError:
                return None
            numbers = [page for _, _, page in parsed.pages]
            if not numbers:
                return None
            pages = max(numbers)
            if len(self._stats) >= _STATS_CACHE_SIZE:
                self._stats.pop(next(iter(self._stats)))
            self._stats[cache_key] = _PdfStats(
                pages, len(parsed.text) // pages, 1 - len(set(numbers)) / pages
            )
        return self._stats[cache_key]

    @staticmethod
    def _seconds(mode: str, size: int, pages: int | None) -> float:
        if mode == "precise":
            return round((pages or 1) * SECONDS_PER_PAGE, 1)
        return round(1.0 + size / (1024 * 1024) * FAST_SECONDS_PER_MB, 1)
