"""TelosDB's HTTP API (§6) under the REST app: /edition, /version, /model_name, /heal,
/settings (monitor_paths applied without a restart), /indexing_status."""

from __future__ import annotations

from bunko import __version__
from tests.e2e.rest_harness import assert_error, wait_until_done, watching
from tests.waiting import wait_for


def test_edition_version_and_model_name(rest):
    with rest.client() as anonymous:
        assert anonymous.get("/version").json() == {"version": __version__}
        assert anonymous.get("/edition").json() == {"edition": "community"}  # keyword-only
        assert anonymous.get("/model_name").json() == {
            "edition": "community",
            "model_name": None,
            "dimension": None,
        }


def test_heal_resyncs_the_index_from_metadata(rest):
    user = rest.new_user()
    for i in range(2):
        record = user.client.post(
            "/upload", files={"file": (f"h{i}.txt", f"healing text {i}".encode(), "text/plain")}
        ).json()
        wait_until_done(user.client, record["id"])
    workspace = rest.services.identity.authenticate(user.token).workspace_id
    rest.services.index.clear(workspace)  # the index drifted away from the metadata
    assert rest.services.index.count(workspace) == 0
    assert user.client.get("/heal").json() == {"synced": 2}
    assert rest.services.index.count(workspace) == 2
    assert_error(rest.client().get("/heal"), 401)


def test_indexing_status_counts_the_callers_workspace(rest):
    user = rest.new_user()
    idle = user.client.get("/indexing_status").json()
    assert idle == {
        "status": "idle",
        "pending": 0,
        "queued": idle["queued"],
        "documents": 0,
        "completed": 0,
        "failed": 0,
    }
    good = user.client.post(
        "/upload", files={"file": ("ok.txt", b"fine text", "text/plain")}
    ).json()
    bad = user.client.post(
        "/upload", files={"file": ("bad.pdf", b"%PDF-1.4 broken", "application/pdf")}
    ).json()
    wait_until_done(user.client, good["id"])
    wait_until_done(user.client, bad["id"])
    status = user.client.get("/indexing_status").json()
    assert (status["status"], status["documents"], status["completed"], status["failed"]) == (
        "idle",
        2,
        1,
        1,
    )


def test_settings_defaults_and_updates(rest):
    user = rest.new_user()
    assert user.client.get("/settings").json() == {
        "monitor_paths": [],
        "run_on_login": False,
        "min_score": 0.3,
        "limit": 5,
    }
    saved = user.client.post("/settings", json={"min_score": 0.5, "limit": 10}).json()
    assert saved["min_score"] == 0.5 and saved["limit"] == 10
    assert user.client.get("/settings").json() == saved
    assert "limit" in str(
        assert_error(user.client.post("/settings", json={"limit": 0}), 400)["message"]
    )
    assert rest.new_user().client.get("/settings").json()["limit"] == 5  # per workspace


def test_monitor_paths_need_an_admin_and_a_real_folder(rest, tmp_path):
    user, admin = rest.new_user(), rest.admin()
    assert_error(user.client.post("/settings", json={"monitor_paths": [str(tmp_path)]}), 403)
    missing = admin.client.post("/settings", json={"monitor_paths": [str(tmp_path / "nope")]})
    assert "monitor_paths" in assert_error(missing, 400)["message"]
    relative = admin.client.post("/settings", json={"monitor_paths": ["relative/path"]})
    assert_error(relative, 400)
    data_dir = rest.services.settings.data_dir
    for overlapping in (data_dir, data_dir.parent):
        response = admin.client.post("/settings", json={"monitor_paths": [str(overlapping)]})
        assert "data folder" in assert_error(response, 400)["message"]


def test_watched_folders_change_without_a_restart(rest, tmp_path):
    """The server's folder monitor picks up monitor_paths the moment they are saved."""
    with watching(rest, None):
        admin = rest.admin()
        workspace = rest.services.identity.authenticate(admin.token).workspace_id
        manuals, notes = tmp_path / "manuals", tmp_path / "notes"
        manuals.mkdir()
        notes.mkdir()
        (manuals / "pump.txt").write_text("The pump needs oil every month.", encoding="utf-8")
        saved = admin.client.post(
            "/settings",
            json={"monitor_paths": [{"path": str(manuals), "category": "manuals"}, str(notes)]},
        )
        assert saved.status_code == 200
        assert saved.json()["monitor_paths"] == [
            {"path": str(manuals.resolve()), "category": "manuals"},
            {"path": str(notes.resolve()), "category": None},
        ]

        def listed(name: str):
            files = admin.client.get("/knowledge-bases").json()
            return next(
                (f for f in files if f["originalName"] == name and f["status"] == "completed"), None
            )

        assert wait_for(lambda: listed("pump.txt"))  # caught up on save
        (notes / "idea.txt").write_text("An idea about windmills.", encoding="utf-8")
        assert wait_for(lambda: listed("idea.txt"))  # watched live
        docs = {d.name: d for d in rest.services.metadata.iter_documents(workspace)}
        assert docs["pump.txt"].category == "manuals" and docs["idea.txt"].category is None

        # unwatching a folder stops ingesting it
        admin.client.post("/settings", json={"monitor_paths": [str(manuals)]})
        wait_for(lambda: listed("idea.txt") is None)
        (notes / "later.txt").write_text("Written after unwatching.", encoding="utf-8")
        (manuals / "valve.txt").write_text("The valve is checked weekly.", encoding="utf-8")
        assert wait_for(lambda: listed("valve.txt"))
        assert listed("later.txt") is None
