"""A file's original, for a reader of its workspace: a short-lived link a browser tab can open
(ports/downloads), or the bytes themselves where this API serves them (the embedded server).
A file of another workspace looks exactly like a missing one."""

from __future__ import annotations

from bunko.domain import Document
from bunko.errors import NotFoundError, PermissionDeniedError
from bunko.ports import BlobStore
from bunko.ports.downloads import OriginalLinks, SignedLink
from bunko.services.library.library import Library


class OriginalFiles:
    def __init__(self, *, library: Library, blobs: BlobStore, links: OriginalLinks) -> None:
        self.library = library
        self.blobs = blobs
        self.links = links

    @property
    def served_here(self) -> bool:
        return self.links.served_here

    def document(self, workspace_id: str, document_id: str) -> Document:
        doc = self.library.find(workspace_id, document_id)
        if doc is None or not doc.blob_key:
            raise NotFoundError(f"knowledge base file {document_id} not found")
        return doc

    def link(self, workspace_id: str, document_id: str) -> tuple[Document, SignedLink]:
        doc = self.document(workspace_id, document_id)
        return doc, self.links.link_to(doc)

    def read(self, doc: Document) -> bytes:
        assert doc.blob_key  # document() checked it
        return self.blobs.get(doc.blob_key)

    def linked(self, workspace_id: str, document_id: str, token: str) -> Document:
        """The document a link names; PermissionDeniedError for an expired or forged one."""
        doc = self.library.find(workspace_id, document_id)
        if doc is None or not doc.blob_key or not self.links.verify(doc, token):
            raise PermissionDeniedError(
                "this link to the file has expired or is not valid: open the file again in Bunko"
            )
        return doc
