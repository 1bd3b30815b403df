"""WebApp: the web app's static files (bunko/web/static, no build step) in a private bucket
behind CloudFront, with `config.json` naming the API's URL.

The API stays on API Gateway's own regional origin (docs/aws.md: a regional endpoint, not
CloudFront, so a streamed answer is not cut after CloudFront's 30 s origin timeout); the app
calls it cross-origin, so the app's origin goes on the API's CORS allow-list (`origin`). A
strict CSP (scripts and styles from the app's origin only; fetches to it, the API and the
files bucket, where large files are PUT) is sent with every page. It names the API by its
origin (the API's id), not by its stage URL: the functions know this app's origin for CORS,
so the CDN must not wait for their stage.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct

# Files over this go straight to S3 with a presigned PUT (POST /uploads/presign): a multipart
# body grows by a third as base64 in the Lambda event, whose payload is capped at 6 MB.
PRESIGN_UPLOADS_ABOVE = 4 * 1024 * 1024


def content_security_policy(api_origin: str, upload_origin: str) -> str:
    return "; ".join([
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        f"connect-src 'self' {api_origin} {upload_origin}",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ])  # fmt: skip


class WebApp(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        static_dir: Path,
        api_url: str,
        api_origin: str,
        upload_origin: str,
        access_logs: s3.IBucket,
    ) -> None:
        super().__init__(scope, construct_id)
        self.bucket = s3.Bucket(
            self, "Assets",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            server_access_logs_bucket=access_logs,
            server_access_logs_prefix="web/",
            # only copies of files in the repository: nothing to keep
            removal_policy=RemovalPolicy.DESTROY,
            auto_delete_objects=True,
        )  # fmt: skip
        headers = cloudfront.ResponseHeadersPolicy(
            self, "Headers",
            security_headers_behavior=cloudfront.ResponseSecurityHeadersBehavior(
                content_security_policy=cloudfront.ResponseHeadersContentSecurityPolicy(
                    content_security_policy=content_security_policy(api_origin, upload_origin), override=True),
                content_type_options=cloudfront.ResponseHeadersContentTypeOptions(override=True),
                frame_options=cloudfront.ResponseHeadersFrameOptions(
                    frame_option=cloudfront.HeadersFrameOption.DENY, override=True),
                referrer_policy=cloudfront.ResponseHeadersReferrerPolicy(
                    referrer_policy=cloudfront.HeadersReferrerPolicy.NO_REFERRER, override=True),
                strict_transport_security=cloudfront.ResponseHeadersStrictTransportSecurity(
                    access_control_max_age=Duration.days(365), include_subdomains=True,
                    override=True),
            ),
        )  # fmt: skip
        origin = origins.S3BucketOrigin.with_origin_access_control(self.bucket)
        self.distribution = cloudfront.Distribution(
            self, "Cdn",
            comment="Bunko web app",
            default_root_object="index.html",
            # index.html and config.json: always fresh, so a release shows at once
            default_behavior=cloudfront.BehaviorOptions(
                origin=origin,
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                cache_policy=cloudfront.CachePolicy.CACHING_DISABLED,
                response_headers_policy=headers,
            ),
            additional_behaviors={"static/*": cloudfront.BehaviorOptions(
                origin=origin,
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                cache_policy=cloudfront.CachePolicy.CACHING_OPTIMIZED,
                response_headers_policy=headers,
            )},
            minimum_protocol_version=cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
            enable_logging=True,
            log_bucket=access_logs,
            log_file_prefix="cdn/",
            price_class=cloudfront.PriceClass.PRICE_CLASS_100,
        )  # fmt: skip
        self.deployment = s3deploy.BucketDeployment(
            self, "Deploy",
            destination_bucket=self.bucket,
            sources=[
                # the package's folder as served locally: /static/..., / is index.html
                s3deploy.Source.asset(str(static_dir.parent), exclude=["*.py", "__pycache__"]),
                s3deploy.Source.data("index.html", (static_dir / "index.html").read_text()),
                s3deploy.Source.json_data("config.json", {
                    "apiBaseUrl": api_url, "presignUploadsAbove": PRESIGN_UPLOADS_ABOVE,
                }),
            ],
            distribution=self.distribution,
            distribution_paths=["/*"],
            prune=True,
        )  # fmt: skip
        self.url = f"https://{self.distribution.distribution_domain_name}"
        self.origin = self.url  # for the API's CORS allow-list
