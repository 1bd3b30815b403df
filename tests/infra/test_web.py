"""How the web app is served on AWS: its static files from a private bucket that only the
CloudFront distribution reads (origin access control), config.json naming the API's URL,
a strict CSP that lets the page call only itself and that API, fresh index and config,
cached modules, and the app's URL as an output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk.assertions import Match

from tests.infra.template_queries import logical_id, resources

pytestmark = pytest.mark.slow  # CDK synth

STATIC = Path(__file__).resolve().parents[2] / "layers" / "bunko" / "bunko" / "web" / "static"


def distribution(template) -> dict:
    [found] = resources(template, "AWS::CloudFront::Distribution").values()
    return found["Properties"]["DistributionConfig"]


def test_the_bucket_is_private_and_read_only_by_cloudfront(template):
    bucket = logical_id(template, "AWS::S3::Bucket", "WebAssets")
    props = resources(template, "AWS::S3::Bucket")[bucket]["Properties"]
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "BlockPublicPolicy": True,
        "IgnorePublicAcls": True, "RestrictPublicBuckets": True,
    }  # fmt: skip
    assert resources(template, "AWS::CloudFront::OriginAccessControl")
    [origin] = distribution(template)["Origins"]
    assert origin["OriginAccessControlId"]
    policies = [
        p for p in resources(template, "AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": bucket}
    ]  # fmt: skip
    statements = policies[0]["Properties"]["PolicyDocument"]["Statement"]
    reads = [s for s in statements if s.get("Principal") == {"Service": "cloudfront.amazonaws.com"}]
    assert reads and all(s["Action"] == "s3:GetObject" for s in reads)


def test_index_and_config_are_fresh_modules_are_cached_https_only(template):
    config = distribution(template)
    assert config["DefaultRootObject"] == "index.html"
    default = config["DefaultCacheBehavior"]
    assert default["ViewerProtocolPolicy"] == "redirect-to-https"
    disabled = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"  # AWS's managed CachingDisabled
    assert default["CachePolicyId"] == disabled
    [static] = config["CacheBehaviors"]
    assert static["PathPattern"] == "static/*" and static["CachePolicyId"] != disabled
    assert static["ViewerProtocolPolicy"] == "redirect-to-https"
    assert config["Logging"]["Prefix"] == "cdn/"


def test_a_strict_csp_lets_the_page_call_only_itself_and_the_api(template):
    [policy] = resources(template, "AWS::CloudFront::ResponseHeadersPolicy").values()
    security = policy["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
    csp = json.dumps(security["ContentSecurityPolicy"]["ContentSecurityPolicy"])
    for directive in ("script-src 'self'", "style-src 'self'", "object-src 'none'",
                      "frame-ancestors 'none'", "connect-src 'self' "):  # fmt: skip
        assert directive in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    api = logical_id(template, "AWS::ApiGateway::RestApi", "RestApi")
    assert api in csp  # connect-src names the deployed API's URL
    assert security["FrameOptions"]["FrameOption"] == "DENY"


def test_the_deployment_ships_the_package_files_and_the_api_url(template):
    [deploy] = resources(template, "Custom::CDKBucketDeployment").values()
    props = deploy["Properties"]
    bucket = logical_id(template, "AWS::S3::Bucket", "WebAssets")
    assert props["DestinationBucketName"] == {"Ref": bucket}
    assert props["Prune"] is True and props["DistributionPaths"] == ["/*"]
    assert len(props["SourceObjectKeys"]) == 3  # the static folder, index.html, config.json
    markers = json.dumps(props["SourceMarkers"])
    assert logical_id(template, "AWS::ApiGateway::RestApi", "RestApi") in markers
    # the same files the local server serves, with the page's modules under static/
    assert (STATIC / "index.html").read_text().count('src="/static/js/main.js"') == 1


def test_the_app_url_is_an_output(template):
    template.has_output("WebUrl", {"Value": Match.object_like({"Fn::Join": Match.any_value()})})
