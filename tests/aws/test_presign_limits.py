"""A presigned upload meets the limits /upload does (issue 47, point 5), through the real api
and ingest handlers on moto and osmem-server:

- the pace and the storage quota are taken when the URL is signed (429, 413), since the PUT
  goes straight to storage where nobody can be told;
- the URL binds the declared size: Content-Length is a signed header, so a PUT of any other
  size fails S3's signature check (moto does not check presigned signatures: the test
  checks as S3 documents it, recomputing SigV4 over the request received);
- the object is marked presigned (a signed header too), so its ingest checks the uploader's
  quota again and deletes a refused object, where an operator's drop is not counted.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import boto3
import requests
from botocore.auth import S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from bunko import lambda_entry
from tests.aws.conftest import FakeLambdaContext
from tests.aws.handlers import call, created_event, load_function, presign, sign_in
from tests.aws.stand_ins import BUCKET, REGION

TEXT = b"# Lamp log\n\nThe keeper trims the wick every evening. " * 20


def s3_accepts(url: str, *, method: str, headers: dict[str, str]) -> bool:
    """S3's check of a presigned request (SigV4 query auth): the signature recomputed over
    the method, path, query and the signed headers *as received* must match."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    signature = query.pop("X-Amz-Signature")
    signed = query["X-Amz-SignedHeaders"].split(";")
    received = {"host": parts.netloc, **{k.lower(): v for k, v in headers.items()}}
    if not set(signed) <= received.keys():
        return False
    request = AWSRequest(
        method=method,
        url=urlunsplit(parts._replace(query=urlencode(query))),
        headers={name: received[name] for name in signed},
    )
    request.context["timestamp"] = query["X-Amz-Date"]
    credentials = boto3.Session().get_credentials().get_frozen_credentials()
    auth = S3SigV4QueryAuth(
        Credentials(credentials.access_key, credentials.secret_key, credentials.token),
        "s3", REGION, expires=int(query["X-Amz-Expires"]),
    )  # fmt: skip
    canonical = auth.canonical_request(request)
    return auth.signature(auth.string_to_sign(request, canonical), request) == signature


def test_the_url_binds_the_declared_size(api_with_accounts, aws_env):
    status, upload = presign(api_with_accounts, sign_in(api_with_accounts), {
        "path": "logs/lamp.md", "contentType": "text/markdown", "size": len(TEXT),
    })  # fmt: skip
    assert status == 200, upload
    signed = dict(parse_qsl(urlsplit(upload["url"]).query))["X-Amz-SignedHeaders"].split(";")
    assert "content-length" in signed and "x-amz-meta-bunko-presigned" in signed
    assert "x-amz-tagging" in signed  # the tag the lifecycle rule expires drops by
    assert "Content-Length" not in upload["headers"]  # the client's HTTP library sends it
    sent = {**upload["headers"], "Content-Length": str(len(TEXT))}
    assert s3_accepts(upload["url"], method="PUT", headers=sent)
    for other in (len(TEXT) + 1, 5 * 1024**3):
        assert not s3_accepts(upload["url"], method="PUT",
                              headers={**sent, "Content-Length": str(other)})  # fmt: skip
    # nor can the uploader drop the mark that puts the file under their quota
    unmarked = {k: v for k, v in sent.items() if k != "x-amz-meta-bunko-presigned"}
    assert not s3_accepts(upload["url"], method="PUT", headers=unmarked)
    # nor the tag that lets an upload that never ingests expire
    untagged = {k: v for k, v in sent.items() if k != "x-amz-tagging"}
    assert not s3_accepts(upload["url"], method="PUT", headers=untagged)


def test_a_size_is_required(api_with_accounts, aws_env):
    status, answer = presign(api_with_accounts, sign_in(api_with_accounts), {"path": "a.md"})
    assert status == 400 and "size" in str(answer["message"])


def test_presign_is_paced_like_upload(api_with_accounts, aws_env, monkeypatch):
    monkeypatch.setenv("BUNKO_UPLOAD_BURST", "2")
    monkeypatch.setenv("BUNKO_UPLOAD_RATE_PER_MINUTE", "1")
    token = sign_in(api_with_accounts)
    answers = [
        presign(api_with_accounts, token, {"path": f"n{i}.md", "size": 10})[0] for i in range(3)
    ]
    assert answers == [200, 200, 429]


def test_presign_refuses_an_upload_over_the_storage_quota(api_with_accounts, aws_env, monkeypatch):
    monkeypatch.setenv("BUNKO_UPLOAD_QUOTA_BYTES", str(2 * len(TEXT)))
    api, ingest = api_with_accounts, load_function("ingest")
    token = sign_in(api)
    status, upload = presign(api, token, {"path": "a.md", "size": len(TEXT)})
    assert status == 200
    assert requests.put(upload["url"], data=TEXT, headers=upload["headers"], timeout=10).ok
    assert ingest.handler(created_event(upload["key"]), FakeLambdaContext()) == {
        "batchItemFailures": []
    }
    status, refused = presign(api, token, {"path": "b.md", "size": len(TEXT) + 1})
    assert status == 413 and "quota" in refused["message"]
    # replacing a file counts only the difference
    assert presign(api, token, {"path": "a.md", "size": len(TEXT) + 1})[0] == 200


def test_a_presigned_file_over_the_quota_on_arrival_is_refused_and_deleted(
    api_with_accounts, aws_env, monkeypatch
):
    """Two URLs signed while there was room; the second file arrives after the first filled
    the quota: its ingest refuses it (no retry, no dead letter) and deletes the object."""
    monkeypatch.setenv("BUNKO_UPLOAD_QUOTA_BYTES", str(len(TEXT) + len(TEXT) // 2))
    api, ingest = api_with_accounts, load_function("ingest")
    token = sign_in(api)
    uploads = [presign(api, token, {"path": p, "size": len(TEXT)})[1] for p in ("a.md", "b.md")]
    for upload in uploads:
        assert requests.put(upload["url"], data=TEXT, headers=upload["headers"], timeout=10).ok
    for upload in uploads:
        assert ingest.handler(created_event(upload["key"]), FakeLambdaContext()) == {
            "batchItemFailures": []
        }
    files = call(api, "GET", "/knowledge-bases", token=token)[1]
    assert [f["name"] for f in files] == ["a.md"]
    s3 = boto3.client("s3", region_name=REGION)
    kept = s3.list_objects_v2(Bucket=BUCKET, Prefix=uploads[1]["key"]).get("KeyCount", 0)
    assert kept == 0  # the refused object is gone; the first one stays
    assert s3.list_objects_v2(Bucket=BUCKET, Prefix=uploads[0]["key"])["KeyCount"] == 1


def test_an_operators_drop_is_not_counted(api_with_accounts, aws_env, monkeypatch):
    monkeypatch.setenv("BUNKO_UPLOAD_QUOTA_BYTES", "10")
    api, ingest = api_with_accounts, load_function("ingest")
    token = sign_in(api)
    workspace = (
        lambda_entry.api_app()
        .state.services.accounts.auth.users.get_user_by_username("ada")
        .workspace_id
    )
    key = f"drop/{workspace}/ops/manual.md"
    boto3.client("s3", region_name=REGION).put_object(Bucket=BUCKET, Key=key, Body=TEXT)
    assert ingest.handler(created_event(key), FakeLambdaContext()) == {"batchItemFailures": []}
    assert [f["name"] for f in call(api, "GET", "/knowledge-bases", token=token)[1]] == [
        "ops/manual.md"
    ]
