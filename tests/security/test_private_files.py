"""Finding 6: bunko.db and the data folders were world-readable (0644/0755). A server started
on a data folder left so by an older Bunko, and everything it writes afterwards (database,
WAL, originals, extracted text, index), is the owner's only."""

from __future__ import annotations

import os
import sqlite3
import stat

from tests.e2e.rest_harness import serve, wait_until_done


def test_every_data_file_is_owner_only(tmp_path):
    data = tmp_path / "data"
    previous = os.umask(0o022)
    try:  # as an older Bunko left it
        (data / "blobs").mkdir(parents=True)
        sqlite3.connect(data / "bunko.db").close()
    finally:
        os.umask(previous)
    assert stat.S_IMODE((data / "bunko.db").stat().st_mode) == 0o644

    os.umask(0o022)  # the server must not rely on a careful caller
    with serve(data) as rest:
        user = rest.new_user()
        record = user.client.post(
            "/upload", files={"file": ("note.txt", b"private words", "text/plain")}
        ).json()
        assert wait_until_done(user.client, record["id"])["status"] == "completed"
        paths = [data, *data.rglob("*")]
        assert len(paths) > 5
        loose = {
            str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode))
            for p in paths
            if stat.S_IMODE(p.stat().st_mode) & 0o077 and not p.is_symlink()
        }
    assert loose == {}
