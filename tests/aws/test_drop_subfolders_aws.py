"""Issue 49, point 1 on AWS: an admin points the drop folder, or a sub-folder of it (the key's
first segment under drop/), at any library with PUT /drop-folder through the api function
(Mangum, API Gateway events), on moto. Objects are written with the S3 API; the bucket's
notification puts S3's own events on the ingest queue, drained through the ingest function,
which reads the choice from the settings table."""

from __future__ import annotations

import json

from bunko import lambda_entry
from bunko.domain import DEFAULT_WORKSPACE_ID
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import api_event, call, deliver, load_function, sign_in
from tests.aws.stand_ins import BUCKET, notify_queue

DROP = "drop/"


def library_state(api, token: str, library: str | None = None) -> dict:
    """GET /drop-folder in `library` (None: the person's own)."""
    headers = {"Authorization": f"Bearer {token}"}
    if library:
        headers["X-Bunko-Library"] = library
    event = api_event("GET", "/drop-folder", headers=headers)
    response = api.handler(event, FakeLambdaContext())
    assert response["statusCode"] == 200, response["body"]
    return json.loads(response["body"])


def documents(workspace_id: str) -> dict[str, str | None]:
    metadata = lambda_entry.ingest_handler().services.metadata
    return {d.path: d.category for d in metadata.iter_documents(workspace_id)}


def test_put_drop_folder_routes_s3_drops_by_key_prefix(aws_env, api_with_accounts):
    api = api_with_accounts
    notify_queue(aws_env, DROP)
    ingest = load_function("ingest")
    admin = sign_in(api)  # the first account: the admin
    status, legal = call(api, "POST", "/libraries", {"name": "Legal"}, admin)
    assert status == 201, legal
    status, ops = call(api, "POST", "/libraries", {"name": "Ops"}, admin)
    assert status == 201, ops

    status, body = call(api, "PUT", "/drop-folder", {"library": "Legal", "subfolder": "legal"},
                        admin)  # fmt: skip
    assert status == 200, body  # 503 before: the drop folder was the embedded server's
    assert body["kind"] == "bucket"
    assert body["subfolders"] == [{"name": "legal", "libraryId": legal["id"]}]
    told = library_state(api, admin, legal["id"])
    assert told["subfoldersHere"] == ["legal"] and told["feedsThisLibrary"] is False

    aws_env.s3.put_object(Bucket=BUCKET, Key=f"{DROP}legal/leases/2024 lease.txt",
                          Body=b"The lease ends in March.")  # fmt: skip
    aws_env.s3.put_object(Bucket=BUCKET, Key=f"{DROP}default/memo.txt", Body=b"Lunch at noon.")
    deliver(aws_env, ingest)
    # the mapped prefix picks the library; the path and category are as they would be unmapped
    assert documents(legal["id"]) == {"legal/leases/2024 lease.txt": "legal"}
    assert "memo.txt" in documents(DEFAULT_WORKSPACE_ID)

    # the whole folder (drop/default/) now fills Ops; the mapped prefix keeps its library
    status, body = call(api, "PUT", "/drop-folder", {"library": "Ops"}, admin)
    assert status == 200 and body["libraryId"] == ops["id"], body
    aws_env.s3.put_object(Bucket=BUCKET, Key=f"{DROP}default/pump.txt", Body=b"Red switch.")
    aws_env.s3.put_object(Bucket=BUCKET, Key=f"{DROP}legal/nda.txt", Body=b"Keep it secret.")
    deliver(aws_env, ingest)
    assert documents(ops["id"]) == {"pump.txt": None}
    assert set(documents(legal["id"])) == {"legal/leases/2024 lease.txt", "legal/nda.txt"}

    # a removal goes to the library the prefix names
    aws_env.s3.delete_object(Bucket=BUCKET, Key=f"{DROP}legal/nda.txt")
    deliver(aws_env, ingest)
    assert set(documents(legal["id"])) == {"legal/leases/2024 lease.txt"}

    # a person who is not an admin may not choose, and is not told the mapping
    person = sign_in(api, "grace", "another long password")
    status, _ = call(api, "PUT", "/drop-folder", {"library": "Legal", "subfolder": "x"}, person)
    assert status == 403
    mine = library_state(api, person)
    assert mine["subfolders"] == [] and mine["libraryId"] is None
    # 'default' is the folder's own library on AWS: no sub-folder may take the name
    status, body = call(api, "PUT", "/drop-folder", {"library": "Ops", "subfolder": "default"},
                        admin)  # fmt: skip
    assert status == 400, body
