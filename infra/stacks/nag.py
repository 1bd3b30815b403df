"""cdk-nag AwsSolutions findings that are accepted, each with its reason.

IAM5 suppressions name the exact wildcard they accept, so a new wildcard still fails.
Everything else in the stack passes the pack as it is.
"""

from __future__ import annotations

from aws_cdk import Stack
from cdk_nag import NagPackSuppression, NagSuppressions

APP_AUTH = (
    "Bunko authenticates in the app (JWT for people, scoped API keys for agents), as its REST "
    "contract requires: /auth/register and /auth/login are public and agents send API keys, "
    "which an API Gateway Cognito or IAM authorizer cannot express."
)


def _s(rule: str, reason: str) -> NagPackSuppression:
    return NagPackSuppression(id=rule, reason=reason)


def suppress_findings(stack: Stack, *, stage_name: str) -> None:
    path = f"/{stack.stack_name}"
    # The functions' own roles.
    for name in ("Api", "Stream", "Ingest"):
        NagSuppressions.add_resource_suppressions_by_path(
            stack, f"{path}/Functions/{name}Role/DefaultPolicy/Resource", [
                NagPackSuppression(
                    id="AwsSolutions-IAM5",
                    reason="Object keys are created at run time: access is scoped to the "
                    "blobs/, drop/ and moves/ (libraries' archives) prefixes of the one bucket.",
                    applies_to=["Resource::<StorageFiles48C02C92.Arn>/blobs/*",
                                "Resource::<StorageFiles48C02C92.Arn>/drop/*",
                                "Resource::<StorageFiles48C02C92.Arn>/moves/*"],
                ),
                NagPackSuppression(
                    id="AwsSolutions-IAM5",
                    reason="X-Ray's PutTraceSegments and PutTelemetryRecords (added by "
                    "Tracing.ACTIVE) and AWS Marketplace's ViewSubscriptions and Subscribe "
                    "(a third-party Bedrock model's first use subscribes) accept no resource "
                    "but '*'.",
                    applies_to=["Resource::*"],
                ),
                NagPackSuppression(
                    id="AwsSolutions-IAM5",
                    reason="A cross-region inference profile routes each call to its model in "
                    "any region of its geography: InvokeModel on that one model id in every "
                    "region (the profile itself is granted by its exact ARN).",
                    applies_to=[{"regex": "/^Resource::arn:<AWS::Partition>:bedrock:\\*::foundation-model\\/.+$/g"}],
                ),
            ],
        )  # fmt: skip
    # The sources' sync: blobs only (no drops), X-Ray's '*' (no Bedrock, no Marketplace).
    NagSuppressions.add_resource_suppressions_by_path(
        stack, f"{path}/Functions/SourcesRole/DefaultPolicy/Resource", [
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                reason="Object keys are created at run time: access is scoped to the blobs/ "
                "prefix of the one bucket.",
                applies_to=["Resource::<StorageFiles48C02C92.Arn>/blobs/*"],
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                reason="X-Ray's PutTraceSegments and PutTelemetryRecords (added by "
                "Tracing.ACTIVE) accept no resource but '*'.",
                applies_to=["Resource::*"],
            ),
        ],
    )  # fmt: skip
    runtime = _s(
        "AwsSolutions-L1", "The layer ships bytecode for the runtime's minor version, compiled "
        "by the interpreter that builds it (bunko:pythonVersion, a supported runtime); a newer "
        "runtime is one context parameter away once the build uses that interpreter.",
    )  # fmt: skip
    for fn in ("Functions/Api", "Functions/Stream", "Functions/Ingest", "Functions/Sources",
               "IndexSetup/OnEvent",
               "IndexSetup/IsComplete"):  # fmt: skip
        NagSuppressions.add_resource_suppressions_by_path(stack, f"{path}/{fn}/Resource", [runtime])
    rest = f"{path}/Rest/Api"
    NagSuppressions.add_resource_suppressions_by_path(stack, rest + "/Resource", [
        _s("AwsSolutions-APIG2", "Every route is a Lambda proxy; request bodies are validated by "
           "the app's pydantic models, which return the contract's error shape."),
    ])  # fmt: skip
    NagSuppressions.add_resource_suppressions_by_path(stack, f"{rest}/DeploymentStage.{stage_name}/Resource", [
        _s("AwsSolutions-APIG3", "WAF is an account-level choice (cost, rules); docs/aws.md "
           "shows how to associate a web ACL with the stage."),
    ])  # fmt: skip
    for method in (
        "Default/ANY",
        "Default/{proxy+}/ANY",
        "Default/mcp/ANY",
        "Default/mcp/{proxy+}/ANY",
        "Default/chat/stream/ANY",
        "Default/chat/stream/{proxy+}/ANY",
        "Default/v1/ANY",
        "Default/v1/{proxy+}/ANY",
    ):
        NagSuppressions.add_resource_suppressions_by_path(stack, f"{rest}/{method}/Resource", [
            _s("AwsSolutions-APIG4", APP_AUTH), _s("AwsSolutions-COG4", APP_AUTH),
        ])  # fmt: skip
    NagSuppressions.add_resource_suppressions_by_path(stack, rest + "/CloudWatchRole/Resource", [
        NagPackSuppression(
            id="AwsSolutions-IAM4",
            reason="API Gateway's account-wide logging role uses the AWS-managed policy made "
            "for it; it can only write to API Gateway's own log groups.",
            applies_to=["Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                        "AmazonAPIGatewayPushToCloudWatchLogs"],
        ),
    ])  # fmt: skip
    NagSuppressions.add_resource_suppressions_by_path(
        stack, f"{path}/Secrets/JwtSigningKey/Resource", [
            _s("AwsSolutions-SMG4", "Rotating the JWT signing key signs every user out; it is "
               "rotated by hand (docs/aws.md), not on a schedule."),
        ],
    )  # fmt: skip
    _suppress_web(stack, path)
    if stack.node.try_find_child("SignIn") is not None:  # bunko:cognitoUserPool
        NagSuppressions.add_resource_suppressions_by_path(stack, f"{path}/SignIn/Pool/Resource", [
            _s("AwsSolutions-COG8", "The Plus feature plan (threat protection) is priced per "
               "monthly active user: an account-level choice (docs/aws.md). People who come "
               "through a federated identity provider are protected by its own sign-in policy; "
               "the pool's local accounts need 12-character passwords and TOTP."),
        ])  # fmt: skip
    _suppress_cdk_internals(stack, path)


def _suppress_web(stack: Stack, path: str) -> None:
    """The web app's CDN (static files only: no data, no secrets, the API has its own checks)."""
    NagSuppressions.add_resource_suppressions_by_path(stack, f"{path}/Web/Cdn/Resource", [
        _s("AwsSolutions-CFR1", "Bunko is for any country its deployer serves; geo restriction "
           "is a deployment choice (docs/aws.md)."),
        _s("AwsSolutions-CFR2", "WAF is an account-level choice (cost, rules), as for the API; "
           "the CDN serves only the app's static files."),
        _s("AwsSolutions-CFR4", "The distribution uses CloudFront's default certificate, which "
           "cannot pin a TLS minimum; TLSv1.2_2021 applies once a custom domain is added."),
    ])  # fmt: skip


def _suppress_cdk_internals(stack: Stack, path: str) -> None:
    """Resources that CDK itself creates (Provider framework, S3 notification handler)."""
    basic = ["Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
             "AWSLambdaBasicExecutionRole"]  # fmt: skip
    internal = "Created by aws-cdk-lib ({}), not configurable from this app."
    provider = f"{path}/IndexSetup/Provider"
    for fn in ("framework-onEvent", "framework-isComplete", "framework-onTimeout"):
        NagSuppressions.add_resource_suppressions_by_path(
            stack, f"{provider}/{fn}/ServiceRole/Resource",
            [NagPackSuppression(id="AwsSolutions-IAM4", reason=internal.format("Provider"),
                                applies_to=basic)],
        )  # fmt: skip
        NagSuppressions.add_resource_suppressions_by_path(
            stack, f"{provider}/{fn}/ServiceRole/DefaultPolicy/Resource",
            [NagPackSuppression(
                id="AwsSolutions-IAM5",
                reason=internal.format("Provider: invoke the handler's versions"),
                applies_to=["Resource::<IndexSetupOnEvent2CF77235.Arn>:*",
                            "Resource::<IndexSetupIsComplete9045188D.Arn>:*"],
            )],
        )  # fmt: skip
        NagSuppressions.add_resource_suppressions_by_path(
            stack, f"{provider}/{fn}/Resource",
            [_s("AwsSolutions-L1", internal.format("Provider: its Node.js runtime"))],
        )  # fmt: skip
    NagSuppressions.add_resource_suppressions_by_path(
        stack, f"{provider}/waiter-state-machine/Role/DefaultPolicy/Resource",
        [NagPackSuppression(
            id="AwsSolutions-IAM5",
            reason=internal.format("Provider: invoke the framework's versions"),
            applies_to=["Resource::<IndexSetupProviderframeworkisCompleteDF36BFEA.Arn>:*",
                        "Resource::<IndexSetupProviderframeworkonTimeout232BF014.Arn>:*"],
        ), NagPackSuppression(
            id="AwsSolutions-IAM5",
            reason="Step Functions' log delivery actions (logs:CreateLogDelivery and the "
            "like) accept no resource but '*'.",
            applies_to=["Resource::*"],
        )],
    )  # fmt: skip
    NagSuppressions.add_resource_suppressions_by_path(
        stack, f"{provider}/waiter-state-machine/Resource",
        [_s("AwsSolutions-SF2", internal.format("Provider: no X-Ray option on its waiter"))],
    )  # fmt: skip
    for child in stack.node.children:
        if child.node.id.startswith("Custom::CDKBucketDeployment"):
            deploy = internal.format("BucketDeployment: copies the web app into its bucket")
            NagSuppressions.add_resource_suppressions(child, [
                NagPackSuppression(id="AwsSolutions-IAM4", applies_to=basic, reason=deploy),
                NagPackSuppression(id="AwsSolutions-IAM5", reason=deploy, applies_to=[
                    "Action::s3:GetObject*", "Action::s3:GetBucket*", "Action::s3:List*",
                    "Action::s3:DeleteObject*", "Action::s3:Abort*",
                    "Resource::<WebAssetsDD5BFD6C.Arn>/*", "Resource::*",
                    "Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-"
                    "<AWS::Region>/*",
                ]),
                _s("AwsSolutions-L1", deploy),
            ], apply_to_children=True)  # fmt: skip
        if child.node.id.startswith("BucketNotificationsHandler"):
            NagSuppressions.add_resource_suppressions(child, [
                NagPackSuppression(id="AwsSolutions-IAM4", applies_to=basic,
                                   reason=internal.format("S3 bucket notifications")),
                NagPackSuppression(id="AwsSolutions-IAM5", applies_to=["Resource::*"],
                                   reason=internal.format("S3 bucket notifications: "
                                                          "PutBucketNotification on the bucket")),
            ], apply_to_children=True)  # fmt: skip
