"""Storage: the bucket (originals, extracted text, drops) and the single DynamoDB table."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_s3 as s3
from constructs import Construct

from bunko.deploy_schema import GLOBAL_INDEXES, PK, SK


class Storage(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        retain_data: bool,
        deletion_protection: bool,
        cors_origins: list[str],
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
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            versioned=True,  # an overwritten or deleted original can be recovered
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="files/",
            lifecycle_rules=[s3.LifecycleRule(
                noncurrent_version_expiration=Duration.days(30),
                abort_incomplete_multipart_upload_after=Duration.days(1),
            )],
            # Browsers PUT large files straight to S3 with presigned URLs: from the allowed
            # origins only (none listed: no browser uploads, CLI and servers still can).
            cors=[s3.CorsRule(
                allowed_methods=[s3.HttpMethods.PUT],
                allowed_origins=cors_origins,
                allowed_headers=["Content-Type", "x-amz-meta-*"],
                max_age=3600,
            )] if cors_origins else None,
            removal_policy=removal,
            auto_delete_objects=not retain_data,
        )  # fmt: skip
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
        )  # fmt: skip
        for name, pk, sk in GLOBAL_INDEXES:
            self.table.add_global_secondary_index(
                index_name=name,
                partition_key=dynamodb.Attribute(name=pk, type=dynamodb.AttributeType.STRING),
                sort_key=dynamodb.Attribute(name=sk, type=dynamodb.AttributeType.STRING),
                projection_type=dynamodb.ProjectionType.ALL,
            )
