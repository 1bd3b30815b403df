"""What a browser on the web app may reach on AWS (issue 30, points 3 and 8), read from the
synthesized template: API Gateway, CloudFront and S3 enforce CORS and CSP only in the cloud.

The presigned PUT itself runs in Chromium against moto S3 with this bucket's CORS rule
(tests/e2e/test_web_presign_upload.py)."""

from __future__ import annotations

import json
from pathlib import Path

import aws_cdk as cdk
import boto3
import pytest
from aws_cdk.assertions import Template

from bunko.adapters.aws import clients
from infra.app import build_app
from infra.constructs.api import GATEWAY_ERRORS
from infra.constructs.storage import named_files_bucket
from infra.constructs.web import PRESIGN_UPLOADS_ABOVE

pytestmark = pytest.mark.slow  # CDK synth

GATEWAY_TYPES = {t.response_type for t in GATEWAY_ERRORS} | {"DEFAULT_4XX", "DEFAULT_5XX"}


def web_origin(template: Template) -> dict:
    [cdn] = template.find_resources("AWS::CloudFront::Distribution")
    return {"Fn::Join": ["", ["https://", {"Fn::GetAtt": [cdn, "DomainName"]}]]}


def files_bucket(template: Template) -> dict:
    [bucket] = [
        b["Properties"] for key, b in template.find_resources("AWS::S3::Bucket").items()
        if key.startswith("StorageFiles")
    ]  # fmt: skip
    return bucket


def gateway_headers(template: Template) -> dict[str, dict]:
    return {
        r["Properties"]["ResponseType"]: r["Properties"].get("ResponseParameters", {})
        for r in template.find_resources("AWS::ApiGateway::GatewayResponse").values()
    }


@pytest.fixture(scope="module")
def two_origins(tmp_path_factory) -> Template:
    app = cdk.App(
        context={
            "aws:cdk:bundling-stacks": [],
            "bunko:corsOrigins": '["https://intra.example.com"]',
        },
        outdir=str(tmp_path_factory.mktemp("cdk.origins")),
    )
    _, stack = build_app(app)
    return Template.from_stack(stack)


def test_the_files_bucket_takes_presigned_puts_from_the_web_app(template):
    [rule] = files_bucket(template)["CorsConfiguration"]["CorsRules"]
    assert rule["AllowedOrigins"] == [web_origin(template)]
    assert rule["AllowedMethods"] == ["PUT"]
    # the headers a presigned upload signs: its type, its options as metadata and its tag
    assert rule["AllowedHeaders"] == ["Content-Type", "x-amz-meta-*", "x-amz-tagging"]


def test_presigned_drops_that_never_ingest_expire(template):
    """Issue 47, point 5: a presigned upload's object is tagged when signed; the rule expires
    tagged objects under drop/ only, so an operator's drops (untagged) and blobs/ stay."""
    rules = files_bucket(template)["LifecycleConfiguration"]["Rules"]
    [rule] = [r for r in rules if r.get("Id") == "ExpirePresignedDrops"]
    assert rule["Status"] == "Enabled"
    assert rule["Prefix"] == "drop/"
    assert rule["TagFilters"] == [{"Key": "bunko-presigned", "Value": "1"}]
    assert rule["ExpirationInDays"] == 14
    # no other rule expires current objects under drop/ or blobs/: only the libraries'
    # archives (moves/, a day) expire besides these
    expiring = {r["Id"]: r["Prefix"] for r in rules if "ExpirationInDays" in r and r is not rule}
    assert expiring == {"ExpireLibraryArchives": "moves/"}
    # the tag's PUT is authorised: S3 checks PutObjectTagging for a PUT with x-amz-tagging
    statements = [
        s for p in template.find_resources("AWS::IAM::Policy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]  # fmt: skip
    tagging = [s for s in statements if "s3:PutObjectTagging" in s["Action"]
               and "StorageFiles" in json.dumps(s["Resource"])]  # fmt: skip
    assert tagging and all(json.dumps(s["Resource"]).count("/drop/*") == 1 for s in tagging)


def test_the_cors_rule_allows_every_header_a_presign_signs(template, monkeypatch):
    """What the browser sends is what the presign returns in `headers`: each must pass the
    rule's AllowedHeaders, as S3 matches them (case-insensitive, `*` a wildcard)."""
    import fnmatch

    from moto import mock_aws

    from bunko.adapters.aws.s3.presign import S3UploadSigner
    from bunko.ports.uploads import DropOptions

    [rule] = files_bucket(template)["CorsConfiguration"]["CorsRules"]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        signer = S3UploadSigner(s3, bucket="b", drop_prefix="drop/", expires_in=900)
        signed = signer.sign_upload(
            workspace_id="ws", path="a/b.pdf", content_type="application/pdf", size=10,
            options=DropOptions(category="a", chunk_size=500, chunk_overlap=50, mode="precise"),
        )  # fmt: skip
    allowed = [h.lower() for h in rule["AllowedHeaders"]]
    for header in signed.headers:
        assert any(fnmatch.fnmatch(header.lower(), a) for a in allowed), header


def test_the_pages_csp_lets_it_put_to_the_files_bucket_and_nowhere_else(template):
    [policy] = template.find_resources("AWS::CloudFront::ResponseHeadersPolicy").values()
    config = policy["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
    parts = config["ContentSecurityPolicy"]["ContentSecurityPolicy"]["Fn::Join"][1]
    connect = json.dumps(parts[parts.index(next(p for p in parts if "connect-src" in str(p))) :])
    connect = connect[: connect.index("object-src")]
    # https://<the files bucket's name>.s3.<region>.<suffix>, the name as the bucket has it
    name = files_bucket(template)["BucketName"]["Fn::Join"][1]
    assert name == ["bunko-files-", {"Ref": "AWS::AccountId"}, "-", {"Ref": "AWS::Region"}]
    host = [" https://bunko-files-", {"Ref": "AWS::AccountId"}, "-", {"Ref": "AWS::Region"},
            ".s3.", {"Ref": "AWS::Region"}, ".", {"Ref": "AWS::URLSuffix"}]  # fmt: skip
    assert json.dumps(host)[1:-1] in connect
    assert "*" not in connect  # no wildcard host: this bucket, the API and the app only


@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1", "ap-northeast-1"])
def test_a_presigned_url_names_the_host_the_csp_allows(region, monkeypatch):
    """The functions sign for the regional endpoint in every region (us-east-1 included),
    which is the host the CSP and the stack's upload origin name."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    client = boto3.client("s3", region_name=region, config=clients._S3_CONFIG)
    url = client.generate_presigned_url(
        "put_object", Params={"Bucket": "bunko-files-123456789012", "Key": "drop/a.txt"}
    )
    assert url.startswith(f"https://bunko-files-123456789012.s3.{region}.amazonaws.com/drop/")


def test_the_bucket_name_is_per_stack_and_fits_s3s_limit():
    app = cdk.App()
    long = cdk.Stack(app, "Bunko-Team-Knowledge-Base-Production-Eu")
    name = named_files_bucket(long)
    assert name.startswith("bunko-team-knowledge-files-")
    # 20 + "-files-" + a 12-digit account + "-" + the longest region name
    assert 20 + len("-files-") + 12 + 1 + len("ap-southeast-5") <= 63
    assert named_files_bucket(cdk.Stack(app, "Second")).startswith("second-files-")


def test_config_json_tells_the_app_when_to_presign(template, synthesized):
    """The app's config.json as the deployment writes it (an asset beside the template)."""
    [deploy] = template.find_resources("Custom::CDKBucketDeployment").values()
    outdir = Path(cdk.Stage.of(synthesized).outdir)
    assets = [outdir / f"asset.{key.removesuffix('.zip')}" for key in
              deploy["Properties"]["SourceObjectKeys"]]  # fmt: skip
    configs = [
        json.loads((a / "config.json").read_text().replace("<<marker:0xbaba:0>>", '"api"'))
        for a in assets if (a / "config.json").exists()
    ]  # fmt: skip
    assert configs == [{"apiBaseUrl": "api", "presignUploadsAbove": PRESIGN_UPLOADS_ABOVE}]
    # under Lambda's 6 MB invoke payload once a multipart body is base64-encoded (× 4/3)
    assert PRESIGN_UPLOADS_ABOVE * 4 / 3 < 6 * 1000 * 1000


def test_the_gateways_own_errors_are_readable_by_the_web_app(template):
    headers = gateway_headers(template)
    assert set(headers) == GATEWAY_TYPES
    [cdn] = template.find_resources("AWS::CloudFront::Distribution")
    for response_type, parameters in headers.items():
        allow = parameters["gatewayresponse.header.Access-Control-Allow-Origin"]
        assert allow == {
            "Fn::Join": ["", ["'https://", {"Fn::GetAtt": [cdn, "DomainName"]}, "'"]]
        }, response_type
        assert parameters["gatewayresponse.header.Vary"] == "'Origin'"


def test_with_several_origins_the_gateway_echoes_the_callers(two_origins):
    for parameters in gateway_headers(two_origins).values():
        allow = parameters["gatewayresponse.header.Access-Control-Allow-Origin"]
        assert allow == "method.request.header.Origin"
