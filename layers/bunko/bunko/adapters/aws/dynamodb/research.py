"""DynamoDBResearchStore: research projects, evidence and sealed corpora in the single table
(infra/TABLE_DESIGN.md, "Research").

Evidence changes bump the project's revision in the same transaction, conditioned on the
revision read. A seal writes its passages first, then the corpus revision, its head and the
project's corpus id in one transaction; a lost race removes the passages it wrote.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bunko.adapters.aws.dynamodb.items import serialize
from bunko.adapters.aws.dynamodb.table import Table, TransactionCancelled, key_only
from bunko.deploy_schema import GSI2, GSI2_PK, GSI2_SK, PK, SK
from bunko.domain import utcnow
from bunko.domain.research import (
    Corpus,
    CorpusPassage,
    Coverage,
    Evidence,
    EvidenceKind,
    EvidenceRef,
    Passage,
    ResearchProject,
)
from bunko.errors import ConflictError

_S = serialize
_MOVED = "the research project changed meanwhile; read it again and retry"


def _ws(ws: str) -> str:
    return f"WS#{ws}"


def _project_key(ws: str, project_id: str) -> dict[str, str]:
    return {PK: _ws(ws), SK: f"RPROJ#{project_id}"}


def _evidence_pk(ws: str, project_id: str) -> str:
    return f"WS#{ws}#RPROJ#{project_id}"


def _corpus_pk(ws: str, corpus_id: str) -> str:
    return f"WS#{ws}#CORPUS#{corpus_id}"


def _passages_pk(ws: str, corpus_id: str, revision: int) -> str:
    return f"WS#{ws}#CORPUS#{corpus_id}#REV#{revision:010d}"


def _source_pk(ws: str, document_id: str, revision: int) -> str:
    return f"WS#{ws}#PINNED#{document_id}#{revision:010d}"


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _project(item: dict[str, Any]) -> ResearchProject:
    return ResearchProject(
        id=item["id"],
        workspace_id=item["workspace_id"],
        name=item["name"],
        revision=item["revision"],
        corpus_id=item.get("corpus_id"),
        created_at=_time(item["created_at"]),
        updated_at=_time(item["updated_at"]),
    )


def _evidence(item: dict[str, Any]) -> Evidence:
    return Evidence(
        id=item["id"],
        workspace_id=item["workspace_id"],
        project_id=item["project_id"],
        kind=EvidenceKind(item["kind"]),
        document_id=item["document_id"],
        revision=item["revision"],
        chunk_id=item.get("chunk_id"),
        note=item.get("note"),
        added_at=_time(item["added_at"]),
    )


def _corpus(item: dict[str, Any]) -> Corpus:
    return Corpus(
        id=item["id"],
        workspace_id=item["workspace_id"],
        project_id=item["project_id"],
        revision=item["revision"],
        project_revision=item["project_revision"],
        evidence=tuple(EvidenceRef(e, r) for e, r in json.loads(item["evidence"])),
        sealed_at=_time(item["sealed_at"]),
        coverage=Coverage(item["coverage"]),
        missing_sources=tuple(json.loads(item["missing_sources"])),
        method_version=item["method_version"],
        sampling=item.get("sampling"),
    )


def _passage(item: dict[str, Any]) -> Passage:
    vector = item.get("vector")
    return Passage(
        chunk_id=item["chunk_id"],
        workspace_id=item["workspace_id"],
        document_id=item["document_id"],
        revision=item["revision"],
        index=item["index"],
        content=item["content"],
        start=item["start"],
        end=item["end"],
        page=item.get("page"),
        of_chunks=item["of_chunks"],
        vector=None if vector is None else bytes(vector.value),
        embedder=item.get("embedder"),
        metadata_terms=tuple(item.get("metadata_terms", ())),
    )


class DynamoDBResearchStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    # projects
    def add_project(self, project: ResearchProject) -> None:
        item = {
            **_project_key(project.workspace_id, project.id),
            "id": project.id,
            "workspace_id": project.workspace_id,
            "name": project.name,
            "revision": project.revision,
            "corpus_id": project.corpus_id,
            "created_at": project.created_at.isoformat(),
            "updated_at": project.updated_at.isoformat(),
        }
        try:
            self.table.put(item, ConditionExpression="attribute_not_exists(pk)")
        except self.table.client.exceptions.ConditionalCheckFailedException as exc:
            raise ConflictError(f"research project {project.id} already exists") from exc

    def get_project(self, workspace_id: str, project_id: str) -> ResearchProject | None:
        item = self.table.get(_project_key(workspace_id, project_id))
        return _project(item) if item else None

    def list_projects(self, workspace_id: str) -> list[ResearchProject]:
        found = [_project(i) for i in self.table.partition(_ws(workspace_id), "RPROJ#")]
        return sorted(found, key=lambda p: (p.created_at, p.id))

    def _bump(self, ws: str, project_id: str, expected: int) -> dict[str, Any]:
        return {
            "Update": {
                "Key": _S(_project_key(ws, project_id)),
                "UpdateExpression": "SET revision = :next, updated_at = :now",
                "ConditionExpression": "revision = :expected",
                "ExpressionAttributeValues": _S(
                    {
                        ":next": expected + 1,
                        ":now": utcnow().isoformat(),
                        ":expected": expected,
                    }
                ),
            }
        }

    # evidence
    def add_evidence(self, evidence: Evidence, *, project_revision: int) -> int:
        e = evidence
        item = {
            PK: _evidence_pk(e.workspace_id, e.project_id),
            SK: f"EVID#{e.id}",
            "id": e.id,
            "workspace_id": e.workspace_id,
            "project_id": e.project_id,
            "kind": str(e.kind),
            "document_id": e.document_id,
            "revision": e.revision,
            "chunk_id": e.chunk_id,
            "note": e.note,
            "added_at": e.added_at.isoformat(),
        }
        try:
            self.table.transact(
                [
                    self._bump(e.workspace_id, e.project_id, project_revision),
                    {"Put": {"Item": _S(item), "ConditionExpression": "attribute_not_exists(pk)"}},
                ]
            )
        except TransactionCancelled as exc:
            raise ConflictError(_MOVED) from exc
        return project_revision + 1

    def remove_evidence(
        self, workspace_id: str, project_id: str, evidence_id: str, *, project_revision: int
    ) -> int | None:
        key = {PK: _evidence_pk(workspace_id, project_id), SK: f"EVID#{evidence_id}"}
        if self.table.get(key) is None:
            return None
        try:
            self.table.transact(
                [
                    self._bump(workspace_id, project_id, project_revision),
                    {"Delete": {"Key": _S(key), "ConditionExpression": "attribute_exists(pk)"}},
                ]
            )
        except TransactionCancelled as exc:
            if exc.reasons[1:2] == ["ConditionalCheckFailed"]:
                return None  # removed by someone else meanwhile
            raise ConflictError(_MOVED) from exc
        return project_revision + 1

    def list_evidence(self, workspace_id: str, project_id: str) -> list[Evidence]:
        items = self.table.partition(_evidence_pk(workspace_id, project_id), "EVID#")
        return sorted((_evidence(i) for i in items), key=lambda e: (e.added_at, e.id))

    # corpora
    def add_corpus(self, corpus: Corpus, passages: Sequence[CorpusPassage]) -> None:
        c, ws = corpus, corpus.workspace_id
        sealed = c.sealed_at.isoformat()
        rows = [
            {
                PK: _passages_pk(ws, c.id, c.revision),
                SK: f"PASS#{seq:08d}",
                GSI2_PK: _source_pk(ws, p.document_id, p.revision),
                # read newest corpus first, and each corpus's passages in order (seq inverted)
                GSI2_SK: f"{sealed}#{c.id}#{c.revision:010d}#{99_999_999 - seq:08d}",
                "evidence_id": cp.evidence_id,
                "chunk_id": p.chunk_id,
                "workspace_id": ws,
                "document_id": p.document_id,
                "revision": p.revision,
                "index": p.index,
                "content": p.content,
                "start": p.start,
                "end": p.end,
                "page": p.page,
                "of_chunks": p.of_chunks,
                "vector": p.vector,
                "embedder": p.embedder,
                # a list (not a set: DynamoDB refuses an empty one)
                **({"metadata_terms": list(p.metadata_terms)} if p.metadata_terms else {}),
            }
            for seq, cp in enumerate(passages)
            for p in (cp.passage,)
        ]
        self.table.batch_write(puts=rows)
        revision = {
            PK: _corpus_pk(ws, c.id),
            SK: f"REV#{c.revision:010d}",
            "id": c.id,
            "workspace_id": ws,
            "project_id": c.project_id,
            "revision": c.revision,
            "project_revision": c.project_revision,
            "evidence": json.dumps([[r.evidence_id, r.revision] for r in c.evidence]),
            "sealed_at": sealed,
            "coverage": str(c.coverage),
            "missing_sources": json.dumps(list(c.missing_sources)),
            "method_version": c.method_version,
            "sampling": c.sampling,
        }
        head_condition = "attribute_not_exists(pk)" if c.revision == 1 else "latest = :previous"
        try:
            self.table.transact(
                [
                    {
                        "Put": {
                            "Item": _S(revision),
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                    {
                        "Update": {
                            "Key": _S({PK: _ws(ws), SK: f"CORPUS#{c.id}"}),
                            "UpdateExpression": "SET latest = :latest, project_id = :project, "
                            "first_sealed = if_not_exists(first_sealed, :sealed)",
                            "ConditionExpression": head_condition,
                            "ExpressionAttributeValues": _S(
                                {
                                    ":latest": c.revision,
                                    ":project": c.project_id,
                                    ":sealed": sealed,
                                    **({":previous": c.revision - 1} if c.revision > 1 else {}),
                                }
                            ),
                        }
                    },
                    {
                        "Update": {
                            "Key": _S(_project_key(ws, c.project_id)),
                            "UpdateExpression": "SET corpus_id = :corpus",
                            "ConditionExpression": "attribute_exists(pk)",
                            "ExpressionAttributeValues": _S({":corpus": c.id}),
                        }
                    },
                ]
            )
        except TransactionCancelled as exc:
            self.table.batch_write(deletes=[key_only(r) for r in rows])
            raise ConflictError(f"corpus {c.id} revision {c.revision} already exists") from exc

    def get_corpus(
        self, workspace_id: str, corpus_id: str, revision: int | None = None
    ) -> Corpus | None:
        pk = _corpus_pk(workspace_id, corpus_id)
        if revision is not None:
            item = self.table.get({PK: pk, SK: f"REV#{revision:010d}"})
            return _corpus(item) if item else None
        head = self.table.get({PK: _ws(workspace_id), SK: f"CORPUS#{corpus_id}"})
        if head is None:
            return None
        return self.get_corpus(workspace_id, corpus_id, head["latest"])

    def list_corpora(self, workspace_id: str) -> list[Corpus]:
        heads = sorted(
            self.table.partition(_ws(workspace_id), "CORPUS#"),
            key=lambda h: (h["first_sealed"], h[SK]),
        )
        keys = [
            {
                PK: _corpus_pk(workspace_id, h[SK].removeprefix("CORPUS#")),
                SK: f"REV#{h['latest']:010d}",
            }
            for h in heads
        ]
        found = {(i["id"], i["revision"]): _corpus(i) for i in self.table.batch_get(keys)}
        order = [(k[PK].rsplit("#", 1)[1], int(k[SK][4:])) for k in keys]
        return [found[o] for o in order if o in found]

    def corpus_passages(
        self, workspace_id: str, corpus_id: str, revision: int
    ) -> list[CorpusPassage]:
        items = self.table.partition(_passages_pk(workspace_id, corpus_id, revision), "PASS#")
        return [CorpusPassage(i["evidence_id"], _passage(i)) for i in items]

    def pinned_passages(self, workspace_id: str, document_id: str, revision: int) -> list[Passage]:
        items = self.table.query(
            IndexName=GSI2,
            KeyConditionExpression="gsi2pk = :pk",
            ScanIndexForward=False,
            ExpressionAttributeValues=_S({":pk": _source_pk(workspace_id, document_id, revision)}),
        )
        return [_passage(i) for i in items]

    def delete_project(self, workspace_id: str, project_id: str) -> bool:
        """Children first, so a delete that dies half-way finishes when run again."""
        project = self.get_project(workspace_id, project_id)
        if project is None:
            return False
        if project.corpus_id:
            pk = _corpus_pk(workspace_id, project.corpus_id)
            for rev in list(self.table.partition(pk, "REV#")):
                passages = list(
                    self.table.partition(
                        _passages_pk(workspace_id, project.corpus_id, rev["revision"]), "PASS#"
                    )
                )
                self.table.batch_write(deletes=[key_only(p) for p in passages])
                self.table.batch_write(deletes=[key_only(rev)])
            self.table.batch_write(
                deletes=[{PK: _ws(workspace_id), SK: f"CORPUS#{project.corpus_id}"}]
            )
        evidence = list(self.table.partition(_evidence_pk(workspace_id, project_id), "EVID#"))
        self.table.batch_write(deletes=[key_only(e) for e in evidence])
        self.table.batch_write(deletes=[_project_key(workspace_id, project_id)])
        return True
