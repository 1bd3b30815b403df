"""Storage: the bucket (originals, extracted text, drops) and the single DynamoDB table."""

from __future__ import annotations

import re

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_s3 as s3
from constructs import Construct

from bunko.deploy_schema import (
    GLOBAL_INDEXES,
    MOVES_DAYS,
    MOVES_PREFIX,
    PK,
    PRESIGNED_DROP_DAYS,
    PRESIGNED_TAG,
    PRESIGNED_TAG_VALUE,
    SK,
    TTL_ATTRIBUTE,
)


class Storage(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        retain_data: bool,
        deletion_protection: bool,
        drop_prefix: str = "drop/",
        files_bucket_name: str | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        removal = RemovalPolicy.RETAIN if retain_data else RemovalPolicy.DESTROY
        self.access_logs = s3.Bucket(
            self, "AccessLogs",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(90))],
            removal_policy=removal,
            auto_delete_objects=not retain_data,
        )  # fmt: skip
        self.bucket = s3.Bucket(
            self, "Files",
            # Named in advance: the web app's CSP names its host, and its CORS names the web
            # app's origin, which would otherwise depend on each other (files_bucket_name).
            bucket_name=files_bucket_name,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            versioned=True,  # an overwritten or deleted original can be recovered
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="files/",
            lifecycle_rules=[s3.LifecycleRule(
                noncurrent_version_expiration=Duration.days(30),
                abort_incomplete_multipart_upload_after=Duration.days(1),
            ), s3.LifecycleRule(
                # A presigned upload's drop (tagged when signed) that never ingested: refused,
                # failed every retry, or never sent on. One that did is kept under blobs/.
                # Expiry adds a delete marker, which S3 reports as LifecycleExpiration, not
                # ObjectRemoved: the document stays (infra/constructs/ingest.py).
                id="ExpirePresignedDrops",
                prefix=drop_prefix,
                tag_filters={PRESIGNED_TAG: PRESIGNED_TAG_VALUE},
                expiration=Duration.days(PRESIGNED_DROP_DAYS),
            ), s3.LifecycleRule(
                # A library's archive: an export's waits 15 minutes for its download, an
                # import's upload until the import ends; a day is their longest stay.
                id="ExpireLibraryArchives",
                prefix=MOVES_PREFIX,
                expiration=Duration.days(MOVES_DAYS),
            )],
            removal_policy=removal,
            auto_delete_objects=not retain_data,
        )  # fmt: skip
        # The host a presigned URL names (clients.py signs for the regional endpoint). From
        # the name given, not the bucket's Ref, so naming it adds no dependency on the bucket.
        stack = Stack.of(self)
        name = files_bucket_name or self.bucket.bucket_name
        self.upload_host = f"{name}.s3.{stack.region}.{stack.url_suffix}"
        self.table = dynamodb.Table(
            self, "Metadata",
            partition_key=dynamodb.Attribute(name=PK, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=SK, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            deletion_protection=deletion_protection,
            removal_policy=removal,
            # Conversations under BUNKO_CONVERSATION_RETENTION_DAYS carry it; nothing else does.
            time_to_live_attribute=TTL_ATTRIBUTE,
        )  # fmt: skip
        for name, pk, sk in GLOBAL_INDEXES:
            self.table.add_global_secondary_index(
                index_name=name,
                partition_key=dynamodb.Attribute(name=pk, type=dynamodb.AttributeType.STRING),
                sort_key=dynamodb.Attribute(name=sk, type=dynamodb.AttributeType.STRING),
                projection_type=dynamodb.ProjectionType.ALL,
            )

    def allow_browser_uploads(self, origins: list[str]) -> None:
        """Browsers PUT large files straight to the bucket with presigned URLs, from these
        origins only (the web app's, and `bunko:corsOrigins`); the signed headers are the
        content type, the upload's options as metadata and its tag."""
        self.bucket.add_cors_rule(
            allowed_methods=[s3.HttpMethods.PUT],
            allowed_origins=origins,
            allowed_headers=["Content-Type", "x-amz-meta-*", "x-amz-tagging"],
            max_age=3600,
        )


def named_files_bucket(stack: Stack) -> str:
    """`<stack>-files-<account>-<region>`: unique per stack, account and region (a second
    stack in the account gets its own), at most 63 characters."""
    slug = re.sub(r"[^a-z0-9-]+", "-", stack.stack_name.lower()).strip("-")[:20].strip("-")
    return f"{slug or 'bunko'}-files-{stack.account}-{stack.region}"
