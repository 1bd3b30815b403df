"""SqliteResearchStore: research projects, evidence and sealed corpora (migration 0004).

A corpus revision and its passages are written in one transaction; deleting a project
cascades to its evidence, corpora and passages (the retained text is released).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime

from bunko.adapters.local.sqlite.db import SqliteDatabase
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

_PROJECT = "id, workspace_id, name, revision, corpus_id, created_at, updated_at"
_EVIDENCE = "id, workspace_id, project_id, kind, document_id, revision, chunk_id, note, added_at"
_CORPUS = (
    "id, workspace_id, project_id, revision, project_revision, evidence, sealed_at, coverage, "
    "missing_sources, method_version, sampling"
)
_PASSAGE = (
    "evidence_id, chunk_id, workspace_id, document_id, revision, idx, content, start_offset, "
    "end_offset, page, of_chunks, vector, embedder, metadata_terms"
)


def _project(row: sqlite3.Row) -> ResearchProject:
    return ResearchProject(
        id=row["id"],
        workspace_id=row["workspace_id"],
        name=row["name"],
        revision=row["revision"],
        corpus_id=row["corpus_id"],
        created_at=datetime.fromisoformat(row["created_at"]),
        updated_at=datetime.fromisoformat(row["updated_at"]),
    )


def _evidence(row: sqlite3.Row) -> Evidence:
    return Evidence(
        id=row["id"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        kind=EvidenceKind(row["kind"]),
        document_id=row["document_id"],
        revision=row["revision"],
        chunk_id=row["chunk_id"],
        note=row["note"],
        added_at=datetime.fromisoformat(row["added_at"]),
    )


def _corpus(row: sqlite3.Row) -> Corpus:
    return Corpus(
        id=row["id"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        revision=row["revision"],
        project_revision=row["project_revision"],
        evidence=tuple(EvidenceRef(e, r) for e, r in json.loads(row["evidence"])),
        sealed_at=datetime.fromisoformat(row["sealed_at"]),
        coverage=Coverage(row["coverage"]),
        missing_sources=tuple(json.loads(row["missing_sources"])),
        method_version=row["method_version"],
        sampling=row["sampling"],
    )


def _passage(row: sqlite3.Row) -> Passage:
    return Passage(
        chunk_id=row["chunk_id"],
        workspace_id=row["workspace_id"],
        document_id=row["document_id"],
        revision=row["revision"],
        index=row["idx"],
        content=row["content"],
        start=row["start_offset"],
        end=row["end_offset"],
        page=row["page"],
        of_chunks=row["of_chunks"],
        vector=row["vector"],
        embedder=row["embedder"],
        metadata_terms=tuple(json.loads(row["metadata_terms"])),
    )


class SqliteResearchStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def _rows(self, sql: str, *params: object) -> list[sqlite3.Row]:
        return self.db.connect().execute(sql, params).fetchall()

    # projects
    def add_project(self, project: ResearchProject) -> None:
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    f"INSERT INTO research_projects ({_PROJECT}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        project.id,
                        project.workspace_id,
                        project.name,
                        project.revision,
                        project.corpus_id,
                        project.created_at.isoformat(),
                        project.updated_at.isoformat(),
                    ),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"research project {project.id} already exists") from exc

    def get_project(self, workspace_id: str, project_id: str) -> ResearchProject | None:
        rows = self._rows(
            f"SELECT {_PROJECT} FROM research_projects WHERE workspace_id = ? AND id = ?",
            workspace_id,
            project_id,
        )
        return _project(rows[0]) if rows else None

    def list_projects(self, workspace_id: str) -> list[ResearchProject]:
        sql = f"SELECT {_PROJECT} FROM research_projects WHERE workspace_id = ? ORDER BY rowid"
        return [_project(r) for r in self._rows(sql, workspace_id)]

    def _bump(self, conn: sqlite3.Connection, ws: str, project_id: str, expected: int) -> int:
        cursor = conn.execute(
            "UPDATE research_projects SET revision = revision + 1, updated_at = ? "
            "WHERE workspace_id = ? AND id = ? AND revision = ?",
            (utcnow().isoformat(), ws, project_id, expected),
        )
        if cursor.rowcount != 1:
            raise ConflictError("the research project changed meanwhile; read it again and retry")
        return expected + 1

    # evidence
    def add_evidence(self, evidence: Evidence, *, project_revision: int) -> int:
        e = evidence
        with self.db.transaction() as conn:
            bumped = self._bump(conn, e.workspace_id, e.project_id, project_revision)
            conn.execute(
                f"INSERT INTO research_evidence ({_EVIDENCE}, seq) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 "
                "FROM research_evidence WHERE project_id = ?))",
                (
                    e.id,
                    e.workspace_id,
                    e.project_id,
                    str(e.kind),
                    e.document_id,
                    e.revision,
                    e.chunk_id,
                    e.note,
                    e.added_at.isoformat(),
                    e.project_id,
                ),
            )
        return bumped

    def remove_evidence(
        self, workspace_id: str, project_id: str, evidence_id: str, *, project_revision: int
    ) -> int | None:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM research_evidence WHERE workspace_id = ? AND project_id = ? "
                "AND id = ?",
                (workspace_id, project_id, evidence_id),
            )
            if cursor.rowcount == 0:
                return None
            return self._bump(conn, workspace_id, project_id, project_revision)

    def list_evidence(self, workspace_id: str, project_id: str) -> list[Evidence]:
        sql = (
            f"SELECT {_EVIDENCE} FROM research_evidence WHERE workspace_id = ? "
            "AND project_id = ? ORDER BY seq"
        )
        return [_evidence(r) for r in self._rows(sql, workspace_id, project_id)]

    # corpora
    def add_corpus(self, corpus: Corpus, passages: Sequence[CorpusPassage]) -> None:
        c = corpus
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    f"INSERT INTO research_corpora ({_CORPUS}) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        c.id,
                        c.workspace_id,
                        c.project_id,
                        c.revision,
                        c.project_revision,
                        json.dumps([[r.evidence_id, r.revision] for r in c.evidence]),
                        c.sealed_at.isoformat(),
                        str(c.coverage),
                        json.dumps(list(c.missing_sources)),
                        c.method_version,
                        c.sampling,
                    ),
                )
                conn.executemany(
                    f"INSERT INTO research_passages (corpus_id, corpus_revision, seq, {_PASSAGE}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            c.id,
                            c.revision,
                            seq,
                            cp.evidence_id,
                            p.chunk_id,
                            p.workspace_id,
                            p.document_id,
                            p.revision,
                            p.index,
                            p.content,
                            p.start,
                            p.end,
                            p.page,
                            p.of_chunks,
                            p.vector,
                            p.embedder,
                            json.dumps(p.metadata_terms),
                        )
                        for seq, cp in enumerate(passages)
                        for p in (cp.passage,)
                    ],
                )
                conn.execute(
                    "UPDATE research_projects SET corpus_id = ? WHERE workspace_id = ? AND id = ?",
                    (c.id, c.workspace_id, c.project_id),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"corpus {c.id} revision {c.revision} already exists") from exc

    def get_corpus(
        self, workspace_id: str, corpus_id: str, revision: int | None = None
    ) -> Corpus | None:
        sql = f"SELECT {_CORPUS} FROM research_corpora WHERE workspace_id = ? AND id = ?"
        params: list[object] = [workspace_id, corpus_id]
        if revision is not None:
            sql += " AND revision = ?"
            params.append(revision)
        rows = self._rows(sql + " ORDER BY revision DESC LIMIT 1", *params)
        return _corpus(rows[0]) if rows else None

    def list_corpora(self, workspace_id: str) -> list[Corpus]:
        rows = self._rows(
            f"SELECT {_CORPUS} FROM research_corpora c WHERE workspace_id = ? AND revision = "
            "(SELECT MAX(revision) FROM research_corpora WHERE id = c.id) ORDER BY "
            "(SELECT MIN(sealed_at) FROM research_corpora WHERE id = c.id), id",
            workspace_id,
        )
        return [_corpus(r) for r in rows]

    def corpus_passages(
        self, workspace_id: str, corpus_id: str, revision: int
    ) -> list[CorpusPassage]:
        rows = self._rows(
            f"SELECT {_PASSAGE} FROM research_passages WHERE workspace_id = ? AND corpus_id = ? "
            "AND corpus_revision = ? ORDER BY seq",
            workspace_id,
            corpus_id,
            revision,
        )
        return [CorpusPassage(r["evidence_id"], _passage(r)) for r in rows]

    def pinned_passages(self, workspace_id: str, document_id: str, revision: int) -> list[Passage]:
        rows = self._rows(
            f"SELECT {', '.join('p.' + c.strip() for c in _PASSAGE.split(','))} "
            "FROM research_passages p JOIN research_corpora c ON c.id = p.corpus_id "
            "AND c.revision = p.corpus_revision WHERE p.workspace_id = ? AND p.document_id = ? "
            "AND p.revision = ? ORDER BY c.sealed_at DESC, p.seq",
            workspace_id,
            document_id,
            revision,
        )
        return [_passage(r) for r in rows]

    def delete_project(self, workspace_id: str, project_id: str) -> bool:
        with self.db.transaction() as conn:
            conn.execute(
                "DELETE FROM research_corpora WHERE workspace_id = ? AND project_id = ?",
                (workspace_id, project_id),
            )  # cascades to the passages
            cursor = conn.execute(
                "DELETE FROM research_projects WHERE workspace_id = ? AND id = ?",
                (workspace_id, project_id),
            )  # cascades to the evidence
            return cursor.rowcount > 0
