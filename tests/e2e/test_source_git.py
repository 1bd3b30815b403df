"""The Git source (issue 48): a real repository made with the git binary, synced into a real
embedded library; commits that add, change, delete and rename, include/exclude globs, a
re-sync of the same commit that reads nothing, and a hand upload in the same library that
survives every sync."""

from __future__ import annotations

from pathlib import Path

import pytest

from bunko.domain.sources import UPLOAD
from bunko.services.ingest import Upload
from tests.conftest import make_services
from tests.e2e.git_repo import Repo

REMOTE = "".join(f"Remote work rule {n}: any two days a week.\n" for n in range(1, 9))


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.write("README.md", "# Handbook\n\nHow the team works.\n")
    r.write("docs/leave.md", "Leave policy: twenty days a year.\n")
    r.write("docs/travel.md", "Travel policy: book trains, not planes, under five hours.\n")
    r.write("docs/old.md", "An outdated page about fax machines.\n")
    r.write("src/app.py", "print('not a document')\n")
    r.write("docs/drafts/wip.md", "Draft, not for the library.\n")
    r.commit("first")
    return r


def test_commits_that_add_change_delete_and_rename_are_mirrored(services, repo):
    ws = "default"
    hand = services.ingest.submit(
        Upload(ws, b"Typed by hand.", path="handbook/docs/hand.txt", source=UPLOAD)
    )
    services.sources.add(
        ws,
        "git",
        "handbook",
        {"url": str(repo.root), "branch": "main", "include": ["*.md"], "exclude": ["drafts/"]},
        operator=True,
    )
    first = services.sources.sync(ws, "handbook")
    assert sorted(first.added) == [
        "handbook/README.md",
        "handbook/docs/leave.md",
        "handbook/docs/old.md",
        "handbook/docs/travel.md",
    ], first
    assert first.fetched == 4 and not first.errors
    assert services.ingest.wait_for_queue(timeout=60)
    travel = services.library.at(ws, "handbook/docs/travel.md")

    same = services.sources.sync(ws, "handbook")
    assert (same.added, same.changed, same.deleted, same.fetched) == ([], [], [], 0)
    assert same.revision == first.revision and same.unchanged == 4

    repo.write("docs/leave.md", "Leave policy: twenty-five days a year.\n")
    (repo.root / "docs/old.md").unlink()
    (repo.root / "policies").mkdir()
    repo.git("mv", "docs/travel.md", "policies/travel.md")
    repo.write("docs/remote.md", REMOTE)
    head = repo.commit("change, delete, rename, add")
    second = services.sources.sync(ws, "handbook")
    assert second.revision == head
    assert second.changed == ["handbook/docs/leave.md"]
    assert second.deleted == ["handbook/docs/old.md"]
    assert second.added == ["handbook/docs/remote.md"]
    assert second.renamed == [("handbook/docs/travel.md", "handbook/policies/travel.md")]
    assert second.fetched == 2  # leave and remote: the rename's bytes are known already
    moved = services.library.at(ws, "handbook/policies/travel.md")
    assert moved is not None and moved.id == travel.id  # the renamed file keeps its document
    assert services.ingest.wait_for_queue(timeout=60)
    assert "twenty-five" in services.library.text(services.library.at(ws, "handbook/docs/leave.md"))

    # a file renamed and changed in one commit: still the same document, a new revision
    repo.git("mv", "docs/remote.md", "docs/remote-work.md")
    repo.write("docs/remote-work.md", REMOTE + "In summer, three days.\n")
    repo.commit("rename and edit")
    remote = services.library.at(ws, "handbook/docs/remote.md")
    third = services.sources.sync(ws, "handbook")
    assert third.renamed == [("handbook/docs/remote.md", "handbook/docs/remote-work.md")]
    assert third.changed == ["handbook/docs/remote-work.md"]
    assert services.library.at(ws, "handbook/docs/remote-work.md").id == remote.id

    kept = services.library.find(ws, hand.id)
    assert kept is not None and kept.path == "handbook/docs/hand.txt"  # every sync left it
    paths = sorted(d.path for d in services.library.documents(ws))
    assert "handbook/docs/drafts/wip.md" not in paths and "handbook/src/app.py" not in paths


def test_a_bad_file_is_recorded_and_the_sync_goes_on(services, repo):
    ws = "default"
    repo.write("docs/empty.md", "")
    repo.commit("an empty file")
    services.sources.add(
        ws, "git", "h", {"url": str(repo.root), "include": ["docs/**"]}, operator=True
    )
    report = services.sources.sync(ws, "h")
    assert list(report.errors) == ["h/docs/empty.md"]
    assert "h/docs/leave.md" in report.added and report.failed is None


def test_bounds_stop_a_run_and_the_next_sync_goes_on(services, repo):
    ws = "default"
    services.sources.add(ws, "git", "h", {"url": str(repo.root), "max_files": 2}, operator=True)
    one = services.sources.sync(ws, "h")
    assert len(one.added) == 2 and not one.complete and one.stopped_by == "max_files"
    two = services.sources.sync(ws, "h")
    assert len(two.added) == 2 and not two.complete
    three = services.sources.sync(ws, "h")
    assert len(three.added) == 1 and three.complete  # six files, five read (app.py is code)
    assert services.sources.sync(ws, "h").fetched == 0


def test_a_missing_branch_fails_the_sync_and_deletes_nothing(services, repo):
    ws = "default"
    services.sources.add(ws, "git", "h", {"url": str(repo.root)}, operator=True)
    services.sources.sync(ws, "h")
    repo.git("branch", "-m", "main", "trunk")
    report = services.sources.sync(ws, "h")
    assert report.failed and report.deleted == []
    assert len(services.library.of_source(ws, services.sources.get(ws, "h").source)) == 5


def test_a_connector_is_paced_by_its_bounds_not_by_a_persons_upload_rate(tmp_path, repo):
    """A repository bigger than the upload burst is taken whole in one sync (the rate is for
    people's uploads; a connector's bounds pace it)."""
    from tests.conftest import make_services

    for n in range(8):
        repo.write(f"more/n{n}.md", f"Note {n} about the rate of uploads.\n")
    repo.commit("more")
    services = make_services(tmp_path / "data", embedder="none", upload_burst=3)
    try:
        services.sources.add("default", "git", "h", {"url": str(repo.root)}, operator=True)
        report = services.sources.sync("default", "h")
        assert len(report.added) == 13 and report.errors == {} and report.complete
    finally:
        services.close()


def test_a_failure_that_may_pass_is_tried_again_at_the_next_sync(services, repo):
    """A file another writer holds the path of meanwhile (a conflict), unlike a file Bunko
    cannot read, is not marked done: the next sync of the same commit writes it."""
    ws = "default"
    services.sources.add(
        ws, "git", "h", {"url": str(repo.root), "include": ["README.md"]}, operator=True
    )
    submit = services.ingest.submit
    calls = []

    def busy(upload):
        from bunko.errors import ConflictError

        calls.append(upload.path)
        if len(calls) == 1:
            raise ConflictError("being written by others")
        return submit(upload)

    services.ingest.submit = busy
    first = services.sources.sync(ws, "h")
    assert list(first.errors) == ["h/README.md"] and not first.complete
    second = services.sources.sync(ws, "h")
    assert second.added == ["h/README.md"] and second.complete


def test_a_path_on_the_server_is_refused_unless_the_operator_adds_it(services, repo):
    """Only the machine's operator (the CLI) may name a local repository: a door reached over
    the network could otherwise read the server's own files."""
    from bunko.errors import ValidationError

    with pytest.raises(ValidationError, match="path on the server is refused"):
        services.sources.add("default", "git", "h", {"url": str(repo.root)})
    assert services.sources.list("default") == []


def test_symlinks_and_submodules_are_not_files_and_a_file_over_the_limit_is_an_error(tmp_path):
    """A symlink and a submodule (a gitlink) are not files; a file over the upload limit is
    an error on it, not read, and not tried again until it changes."""
    services = make_services(tmp_path / "data", embedder="none", max_file_bytes=1000)
    try:
        r = Repo(tmp_path / "links")
        r.write("docs/leave.md", "Leave policy: twenty days a year.\n")
        r.write("docs/big.md", "A long page.\n" * 100)
        (r.root / "docs/link.md").symlink_to("leave.md")
        r.git("add", "-A")
        sub = "d049f6c27a2244e12041955e262a404c7faba355"  # a commit of another repository
        r.git("update-index", "--add", "--cacheinfo", f"160000,{sub},vendor/lib.md")
        r.git("commit", "--quiet", "-m", "links")
        assert "120000" in r.git("ls-files", "-s", "docs/link.md")  # a symlink, as Git keeps one
        services.sources.add("default", "git", "h", {"url": str(r.root)}, operator=True)
        first = services.sources.sync("default", "h")
        assert first.failed is None and first.added == ["h/docs/leave.md"], first
        assert list(first.errors) == ["h/docs/big.md"] and "the limit is 1,000" in str(first.errors)
        r.write("docs/leave.md", "Leave policy: twenty-five days a year.\n")
        r.commit("edit")
        second = services.sources.sync("default", "h")  # the big file unchanged: not tried
        assert second.changed == ["h/docs/leave.md"] and second.errors == {}, second
        r.write("docs/big.md", "A short page now.\n")
        r.commit("shorter")
        assert services.sources.sync("default", "h").added == ["h/docs/big.md"]
    finally:
        services.close()
