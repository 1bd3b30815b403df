"""A library worth moving, and what a moved library must still be: the same documents (path,
metadata, category, source), members by username, settings, sources, and the same top hits
for a set of questions (tests/e2e/test_library_move.py, tests/aws/test_library_move_aws.py)."""

from __future__ import annotations

import json
import zipfile
from dataclasses import replace
from pathlib import Path

from bunko.domain import DocumentStatus
from bunko.services.accounts.tokens import principal_for
from bunko.services.chat.chat import Source
from bunko.services.ingest import Upload
from bunko.services.search import SearchOptions

LIBRARY = "Team Handbook"
PASSWORD = "correct horse battery staple"
# path → (text, category, metadata)
HANDBOOK = {
    "policies/leave.md": (
        "# Parental leave\n\nEmployees receive sixteen weeks of paid parental leave. "
        "Notify your manager eight weeks before the leave begins.",
        "hr",
        {"team": "people", "year": 2025.0},
    ),
    "policies/expenses.md": (
        "# Travel expenses\n\nTrain tickets and hotel receipts are reimbursed within thirty "
        "days. Taxi fares need a receipt; meals abroad have a daily allowance.",
        "finance",
        {"team": "finance"},
    ),
    "engineering/deploys.md": (
        "# Deploying\n\nDeploys go out on Tuesdays through the canary pipeline. A rollback "
        "restores the previous build within five minutes.",
        "engineering",
        {"team": "platform", "tags": ["ops", "release"]},
    ),
    "engineering/oncall.md": (
        "# On-call rota\n\nThe pager rotates weekly. Escalate an outage to the incident "
        "commander after fifteen minutes without progress.",
        "engineering",
        {"team": "platform"},
    ),
    "office/lighthouse.md": (
        "# The lighthouse office\n\nOur harbour office sits beside the old lighthouse. "
        "Visitors park at the ferry terminal and walk along the pier.",
        None,
        {},
    ),
    "office/kitchen.md": (
        "# Kitchen\n\nThe espresso machine is descaled every Friday. Label your lunch in "
        "the fridge; it is emptied on Thursday evenings.",
        None,
        {"floor": "3"},
    ),
    "社内/休暇.md": (
        "# 有給休暇\n\n有給休暇は年二十日です。申請は三日前までに上長へ提出してください。",
        "hr",
        {"team": "people"},
    ),
}
QUESTIONS = [
    "parental leave weeks",
    "hotel receipts reimbursed",
    "canary rollback",
    "pager escalation incident",
    "ferry terminal pier",
    "espresso descaled",
    "有給休暇",
]


def make_library(services, *, missing: str = "lin") -> str:
    """The handbook as a shared library: ada owns it, grace edits, `missing` views (a
    username the tests leave out of the target); its settings changed from the defaults.
    Waits until every document is indexed; the workspace id."""
    auth = services.accounts.auth
    ada = auth.create_user("ada", PASSWORD, is_admin=True)
    auth.create_user("grace", PASSWORD)
    auth.create_user(missing, PASSWORD)
    libraries = services.accounts.libraries
    library = libraries.create(principal_for(ada), LIBRARY)
    libraries.set_member(principal_for(ada), library.id, "grace", "editor")
    libraries.set_member(principal_for(ada), library.id, missing, "viewer")
    services.accounts.workspace_settings.update(
        library.id, {"min_score": 0.25, "limit": 7}, may_watch_folders=False
    )
    add_documents(services, library.id)
    return library.id


def add_documents(services, workspace: str) -> None:
    docs = [
        services.ingest.submit(
            Upload(workspace, text.encode(), path=path, category=category, metadata=metadata,
                   source="upload")
        )
        for path, (text, category, metadata) in HANDBOOK.items()
    ]  # fmt: skip
    for doc in docs:
        done = services.library.wait_until_indexed(workspace, doc.id, timeout=120)
        assert done.status is DocumentStatus.COMPLETED, done.error


def documents(services, workspace: str) -> dict[str, tuple]:
    """What a move must keep of each document, by path."""
    return {
        d.path: (d.content_hash, d.category, d.metadata, d.source, str(d.status))
        for d in services.library.documents(workspace)
    }


def top_hits(services, workspace: str, k: int = 3) -> dict[str, list[str]]:
    """Each question's top `k` paths (no cut-off: what ranks first is what is compared)."""
    options = SearchOptions(limit=k, min_score=0.0)
    return {
        q: [hit.path for hit in services.search.search(workspace, q, options).items]
        for q in QUESTIONS
    }


LEAVE = "policies/leave.md"


EARLIER = [
    b"# Parental leave\n\nEmployees receive ten weeks of paid parental leave.",
    b"# Parental leave\n\nEmployees receive twelve weeks of paid parental leave.",
]


def history(services, workspace: str, path: str) -> list[str]:
    doc = services.library.at(workspace, path)
    revisions = services.metadata.list_revisions(workspace, doc.id)
    return [r.content_hash for r in sorted(revisions, key=lambda r: r.revision)]


def with_history(services) -> str:
    """The handbook library, its leave policy written twice before its current text."""
    library = make_library(services)
    current = HANDBOOK[LEAVE][0].encode()
    for data in [*EARLIER, current]:
        doc = services.ingest.submit(
            Upload(library, data, path=LEAVE, category="hr", metadata={"team": "people"},
                   source="upload")
        )  # fmt: skip
        services.library.wait_until_indexed(library, doc.id, timeout=60)
    return library


def ask(services, workspace: str, username: str, question: str, *, found: bool):
    user = services.accounts.auth.users.get_user_by_username(username)
    principal = replace(principal_for(user), workspace_id=workspace)
    doc = services.library.at(workspace, LEAVE)
    sources = [Source(file_name="leave.md", content="sixteen weeks", score=0.8, chunk_index=0,
                      document_id=doc.id)] if found else []  # fmt: skip
    kept = services.answers.keep(
        principal, question=question, answer="Sixteen weeks." if found else "Nothing found.",
        sources=sources, door="rest",
    )  # fmt: skip
    return principal, kept


def rewrite(archive: Path, out: Path, *, drop=(), add=None, change=None) -> Path:
    """A copy of `archive` without `drop`, with `add` (name → bytes) and `change` (name →
    function of the old bytes)."""
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in src.namelist():
            if name in drop:
                continue
            data = src.read(name)
            dst.writestr(name, (change or {}).get(name, lambda b: b)(data))
        for name, data in (add or {}).items():
            dst.writestr(name, data)
    return out


def manifest_with(**fields):
    return lambda raw: json.dumps({**json.loads(raw), **fields}).encode()
