"""Input models of the research operations: strict, bounded, every call names its workspace.

`CorpusGetInput` is sosoapi's `research_corpora_get` input and advertises the page's schema
verbatim (bunko.operations.contract_schemas); the others follow the same rules.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from pydantic import Field, field_validator

from bunko.domain.research import MAX_CORPUS_EVIDENCE
from bunko.operations.contract_schemas import contract_schema
from bunko.operations.models import StrictInput
from bunko.services.bounds import QUERY_CHARS, RESULTS
from bunko.services.research import MAX_NAME_CHARS, MAX_NOTE_CHARS

MAX_SAFE_INTEGER = 2**53 - 1  # the contract's bound on revisions: JavaScript's safe integers

WorkspaceId = Field(
    description="The workspace to work in: the caller's own (another workspace is refused)."
)


class WorkspaceInput(StrictInput):
    workspace_id: UUID = WorkspaceId


class ProjectCreateInput(WorkspaceInput):
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS, description="A short title.")


class ProjectInput(WorkspaceInput):
    project_id: UUID = Field(description="The research project, as research_projects_list gives.")


class EvidenceAddInput(WorkspaceInput):
    project_id: UUID = Field(description="The research project, as research_projects_list gives.")
    document_id: UUID = Field(description="The document, as search_text or get_document give.")
    revision: int = Field(
        gt=0, le=MAX_SAFE_INTEGER, description="The exact document revision the evidence is."
    )
    chunk_id: UUID | None = Field(
        None, description="One item (chunk) of that revision; omitted: the whole document."
    )
    note: str | None = Field(
        None, min_length=1, max_length=MAX_NOTE_CHARS, description="Why this evidence matters."
    )


class EvidenceRemoveInput(WorkspaceInput):
    project_id: UUID
    evidence_id: UUID = Field(description="As research_evidence_add returned it.")


class CorpusSealInput(WorkspaceInput):
    project_id: UUID
    sample_size: int | None = Field(
        None,
        ge=1,
        le=MAX_CORPUS_EVIDENCE,
        description="Seal a seeded random sample of this many evidence items (coverage "
        "bounded_sample); needed when a project holds more than 500.",
    )
    sample_seed: int = Field(0, ge=0, le=MAX_SAFE_INTEGER, description="The sample's seed.")


class CorpusGetInput(StrictInput):
    workspace_id: UUID
    id: UUID
    revision: int | None = Field(None, gt=0, le=MAX_SAFE_INTEGER)

    @field_validator("revision", mode="before")
    @classmethod
    def _no_null(cls, value: Any) -> Any:
        if value is None:  # the contract's revision is an integer or absent, never null
            raise ValueError("revision must be an integer greater than 0, or left out")
        return value

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return contract_schema("research_corpora_get", "input")


class CorpusSearchInput(WorkspaceInput):
    id: UUID = Field(description="The corpus, as research_corpora_list gives.")
    query: str = Field(max_length=QUERY_CHARS, description="Words or a sentence.")
    revision: int | None = Field(
        None, gt=0, le=MAX_SAFE_INTEGER, description="A corpus revision; omitted: the latest."
    )
    limit: int = Field(5, ge=1, le=RESULTS, description="Maximum number of hits.")
    min_score: float = Field(
        0.3, ge=0.0, le=1.0, description="Similarity cut-off in [0, 1], as search_text's."
    )
    filter: dict[str, Any] | None = Field(
        None,
        description="Only passages whose document's metadata, as it was when the corpus was "
        "sealed, passes this filter (search_text's grammar: equals, in, range, exists, "
        "andAll, orAll).",
    )
