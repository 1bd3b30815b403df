"""`bunko source add|sync|list|remove` as real processes, over a real Git repository and a
real website on a local socket."""

from __future__ import annotations

import json

from tests.e2e.cli_harness import run
from tests.e2e.local_site import LocalSite
from tests.e2e.test_source_git import Repo


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
