"""Issue 49, point 1: an admin points a sub-folder of the drop folder at any library, over the
real server (HTTP on a socket) with the folder monitor `bunko serve` runs and real files. A
mapped sub-folder fills its library (its files move there, with the path and category they
had), an unmapped one the folder's library; the library page's source is told per library."""

from __future__ import annotations

from tests.e2e.rest_harness import serve, watching
from tests.waiting import wait_for


def test_a_subfolder_fills_the_library_an_admin_points_it_at(tmp_path):
    drop = tmp_path / "drop"
    (drop / "legal").mkdir(parents=True)
    (drop / "misc").mkdir()
    (drop / "memo.txt").write_text("Lunch is at noon.", "utf-8")
    (drop / "legal" / "lease.txt").write_text("The lease ends in March.", "utf-8")
    (drop / "misc" / "note.txt").write_text("Water the plants.", "utf-8")
    with serve(tmp_path / "data") as rest, watching(rest, drop):
        admin = rest.client(rest.admin().token)
        legal = admin.post("/libraries", json={"name": "Legal"}).json()
        ops = admin.post("/libraries", json={"name": "Ops"}).json()

        def files(library: str) -> dict[str, str | None]:
            listed = admin.get("/knowledge-bases", headers={"X-Bunko-Library": library})
            return {f["name"]: f["category"] for f in listed.json() if f["status"] == "completed"}

        everything = {"memo.txt": None, "legal/lease.txt": "legal", "misc/note.txt": "misc"}
        assert wait_for(lambda: files("default") == everything)

        chosen = admin.put("/drop-folder", json={"library": "Legal", "subfolder": "legal"})
        assert chosen.status_code == 200, chosen.text
        assert chosen.json()["subfolders"] == [{"name": "legal", "libraryId": legal["id"]}]
        # the sub-folder's file moves to Legal with its path and category; the rest stays
        assert wait_for(lambda: files("Legal") == {"legal/lease.txt": "legal"})
        assert wait_for(lambda: files("default") == {"memo.txt": None, "misc/note.txt": "misc"})
        (drop / "legal" / "nda.txt").write_text("Keep it secret.", "utf-8")
        (drop / "misc" / "later.txt").write_text("Unmapped: the folder's library.", "utf-8")
        assert wait_for(lambda: "legal/nda.txt" in files("Legal"))
        assert wait_for(lambda: "misc/later.txt" in files("default"))

        # a sub-folder that does not exist yet is made, ready to drop into
        assert admin.put("/drop-folder", json={"library": ops["id"], "subfolder": "ops"}).is_success
        assert wait_for(lambda: (drop / "ops").is_dir())

        # each library is told what fills it
        here = admin.get("/drop-folder", headers={"X-Bunko-Library": "Legal"}).json()
        assert here["feedsThisLibrary"] is False and here["subfoldersHere"] == ["legal"]
        told = admin.get("/drop-folder", headers={"X-Bunko-Library": "default"}).json()
        assert told["feedsThisLibrary"] is True and told["subfoldersHere"] == []

        # names that are no sub-folder of it are refused
        for bad in ["../etc", "a/b", ".hidden", "default", ""]:
            refused = admin.put("/drop-folder", json={"library": "Ops", "subfolder": bad})
            assert refused.status_code in (400, 422), (bad, refused.text)

        # a person who is not an admin may not choose and is not told the mapping
        person = rest.new_user()
        assert (
            person.client.put(
                "/drop-folder", json={"library": "Legal", "subfolder": "legal"}
            ).status_code
            == 403
        )
        assert person.client.delete("/drop-folder/subfolders/legal").status_code == 403
        told = person.client.get("/drop-folder").json()
        assert told["subfolders"] == [] and told["libraryId"] is None

        # unmapped again, the folder's library takes the sub-folder's files back
        unmapped = admin.delete("/drop-folder/subfolders/legal")
        assert unmapped.status_code == 200, unmapped.text
        assert [s["name"] for s in unmapped.json()["subfolders"]] == ["ops"]
        assert wait_for(lambda: {"legal/lease.txt", "legal/nda.txt"} <= set(files("default")))
