"""`bunko source add|sync|list|remove` as real processes, over a real Git repository and a
real website on a local socket."""

from __future__ import annotations

import json

import pytest

from tests.e2e.cli_harness import run
from tests.e2e.git_repo import Repo
from tests.e2e.local_site import LocalSite

pytestmark = pytest.mark.slow  # real `bunko` processes, a dozen a test


def test_a_git_source_from_the_command_line(tmp_path):
    repo = Repo(tmp_path / "repo")
    repo.write("a.md", "Alpha notes about anchors.\n")
    repo.write("b.md", "Beta notes about boats.\n")
    repo.commit("first")
    data = tmp_path / "data"
    added = run(["source", "add", "git", "--name", "notes", "--path", str(repo.root)], data)
    assert "added git source 'notes'" in added.stdout
    first = run(["source", "sync", "notes"], data)
    assert "added notes/a.md" in first.stdout and "2 added" in first.stdout
    found = run(["search", "boats"], data)
    assert "notes/b.md" in found.stdout
    (repo.root / "a.md").unlink()
    repo.commit("a goes")
    second = run(["source", "sync", "notes"], data)
    assert "deleted notes/a.md" in second.stdout and "1 deleted" in second.stdout
    listed = json.loads(run(["source", "list", "--json"], data).stdout)
    assert [(s["name"], s["kind"], s["last_sync"]["deleted"]) for s in listed] == [
        ("notes", "git", 1)
    ]
    gone = run(["source", "remove", "notes"], data)
    assert "1 documents deleted" in gone.stdout
    assert run(["source", "list"], data).stdout == ""


def test_a_web_source_from_the_command_line_and_its_errors(tmp_path):
    site = LocalSite()
    try:
        site.html("/", "<main><p>Welcome page about walruses.</p></main>", title="Home")
        data = tmp_path / "data"
        run(["source", "add", "web", "--name", "site", "--url", site.url + "/"], data)
        out = run(["source", "sync", "site"], data).stdout
        assert "added site/127.0.0.1/index.md" in out
        again = run(["source", "sync", "site"], data).stdout
        assert "0 added, 0 changed, 0 renamed, 0 deleted, 1 unchanged" in again
        listed = run(["source", "list"], data).stdout
        assert listed.startswith("site\tweb\t") and "last sync: 0 added" in listed
        kept = run(["source", "remove", "site", "--keep-documents"], data).stdout
        assert "its documents kept" in kept
        assert "index.md" in run(["search", "walruses"], data).stdout
        refused = run(
            ["source", "add", "ftp", "--name", "x", "--url", "ftp://h/"], data, check=False
        )
        assert refused.returncode == 1 and "source kind" in refused.stderr
    finally:
        site.close()


def test_a_sharepoint_and_a_gdrive_source_from_the_command_line(tmp_path):
    """The credential comes from an environment variable (never argv), is kept encrypted and
    never printed; a sync against each fake prints what it added."""
    from tests.e2e.fake_gdrive import DOC, FakeGDrive
    from tests.e2e.fake_graph import FakeGraph

    graph, gd = FakeGraph(), FakeGDrive()
    try:
        folder = graph.folder("Policies")
        graph.put("leave.md", b"Leave: twenty days of walrus watching.\n", folder)
        team = gd.folder("Team")
        gd.add("Handbook", DOC, team, b"Handbook: narwhals welcome.\n")
        data = tmp_path / "data"
        env = {"SP_TOKEN": graph.token, "GD_TOKEN": gd.token}
        run(
            ["source", "add", "sharepoint", "--name", "sp", "--url", graph.url,
             "--drive-id", graph.drive_id, "--item-id", folder, "--credential-env", "SP_TOKEN"],
            data, env=env,
        )  # fmt: skip
        run(
            ["source", "add", "gdrive", "--name", "gd", "--url", gd.url, "--folder-id", team,
             "--credential-env", "GD_TOKEN"],
            data, env=env,
        )  # fmt: skip
        assert "added sp/leave.md" in run(["source", "sync", "sp"], data).stdout
        assert "added gd/Handbook.txt" in run(["source", "sync", "gd"], data).stdout
        assert "gd/Handbook.txt" in run(["search", "narwhals"], data).stdout
        listed = run(["source", "list", "--json"], data).stdout
        assert graph.token not in listed and gd.token not in listed
        kinds = {s["name"]: (s["kind"], s["has_credential"]) for s in json.loads(listed)}
        assert kinds == {"sp": ("sharepoint", True), "gd": ("gdrive", True)}
        graph.token = "rotated"
        failed = run(["source", "sync", "sp"], data, check=False)
        assert failed.returncode == 1 and "credential rejected/expired" in failed.stderr
    finally:
        graph.close()
        gd.close()
