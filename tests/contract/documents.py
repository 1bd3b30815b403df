"""Documents for the MetadataStore contract tests: two workspaces and a plain-text file."""

from __future__ import annotations

from bunko.domain import Document, new_id

WS = "11111111-1111-4111-8111-111111111111"
OTHER_WS = "22222222-2222-4222-8222-222222222222"


def make_doc(path: str = "notes/a.txt", workspace_id: str = WS, **kw) -> Document:
    return Document(
        id=new_id(),
        workspace_id=workspace_id,
        path=path,
        name=path.rsplit("/", 1)[-1],
        mime="text/plain",
        **kw,
    )
