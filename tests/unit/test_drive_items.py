"""The cloud-drive connectors' item trees (services/sources/drives.py): paths worked out from
parent ids, two files of one name in a folder kept apart the same way every sync, and a loop
of parents (a drive never has one; a corrupt state might) not followed forever."""

from __future__ import annotations

from bunko.services.sources.drives import files_under, path_in


def _name(item):
    return item["n"]


def test_paths_come_from_parent_ids_and_only_the_scope_counts():
    items = {
        "root": {"n": "root", "p": None, "f": 1},
        "docs": {"n": "Docs", "p": "root", "f": 1},
        "sub": {"n": "Sub/Part", "p": "docs", "f": 1},
        "a": {"n": "a.md", "p": "docs", "t": "1"},
        "b": {"n": "b.md", "p": "sub", "t": "2"},
        "c": {"n": "c.md", "p": "root", "t": "3"},
        "lost": {"n": "lost.md", "p": "unknown", "t": "4"},
    }
    assert path_in(items, "b", "docs") == ["Sub/Part", "b.md"]
    assert path_in(items, "c", "docs") is None
    found = files_under(items, "docs", "lib", name_of=_name)
    # a "/" in a name cannot split a path: it becomes "_"
    assert [(f.id, f.path) for f in found] == [("b", "lib/Sub_Part/b.md"), ("a", "lib/a.md")]
    everything = files_under(items, "root", "lib", name_of=_name)
    assert {f.id for f in everything} == {"a", "b", "c"}


def test_two_files_of_one_name_are_kept_apart_the_same_way_each_time():
    items = {
        "z-second": {"n": "notes.md", "p": "root", "t": "1"},
        "a-first": {"n": "Notes.md", "p": "root", "t": "2"},
    }
    once = files_under(items, "root", "lib", name_of=_name)
    again = files_under(dict(reversed(list(items.items()))), "root", "lib", name_of=_name)
    assert [(f.id, f.path) for f in once] == [
        ("a-first", "lib/Notes.md"),
        ("z-second", "lib/notes~z-second.md"),
    ]
    assert once == again


def test_a_loop_of_parents_is_not_followed_forever():
    items = {"x": {"n": "x", "p": "y", "f": 1}, "y": {"n": "y", "p": "x", "f": 1},
             "f": {"n": "f.md", "p": "x", "t": "1"}}  # fmt: skip
    assert files_under(items, "root", "lib", name_of=_name) == []
