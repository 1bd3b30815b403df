"""What a listing of one workspace's documents asks for (a name filter, an order) and the
page it gets back, plus the one in-memory rule both stores' slow paths and the fakes share,
so every backend filters and orders alike."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from bunko.domain.metadata import matches, terms_of

if TYPE_CHECKING:
    from bunko.domain.documents import Document
    from bunko.domain.metadata import Filter as MetadataFilter

DocumentSort = Literal["date", "name", "size", "type"]
SORTS: tuple[DocumentSort, ...] = ("date", "name", "size", "type")


@dataclass(frozen=True)
class DocumentQuery:
    # A case-insensitive part of the file's name or path; None or "": every file.
    name: str | None = None
    sort: DocumentSort = "date"  # date: created_at; type: the MIME type
    descending: bool = True
    # Only the documents passing this metadata filter (domain/metadata.parse_filter).
    filter: MetadataFilter | None = None

    @property
    def folded_name(self) -> str:
        return fold(self.name or "").strip()

    @property
    def is_default(self) -> bool:
        """By date with no filter: the order the stores keep an index in."""
        return self.sort == "date" and not self.folded_name and self.filter is None


@dataclass(frozen=True)
class DocumentPage:
    documents: list[Document]
    total: int  # documents matching the query, on every page


class Listable(Protocol):
    id: str
    name: str
    path: str
    size: int
    mime: str
    category: str | None
    metadata: dict[str, str | float | list[str]]
    created_at: datetime


L = TypeVar("L", bound=Listable)


def fold(text: str) -> str:
    """Case folding for matching and ordering names (full Unicode, not only ASCII)."""
    return text.casefold()


def sort_key(doc: Listable, sort: DocumentSort) -> tuple:
    """Ties fall back to the name, then the id, so a page never shuffles between requests."""
    if sort == "date":
        return (doc.created_at, doc.id)
    if sort == "size":
        return (doc.size, fold(doc.name), doc.id)
    if sort == "type":
        return (doc.mime, fold(doc.name), doc.id)
    return (fold(doc.name), fold(doc.path), doc.id)


def arrange(docs: Iterable[L], query: DocumentQuery) -> list[L]:
    """The documents matching `query`, in its order."""
    part = query.folded_name
    found = [d for d in docs if not part or part in fold(d.name) or part in fold(d.path)]
    if query.filter is not None:
        flt = query.filter
        found = [d for d in found if matches(flt, terms_of(d.metadata, d.category))]
    found.sort(key=lambda d: sort_key(d, query.sort), reverse=query.descending)
    return found
