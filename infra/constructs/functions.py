"""The Lambda functions and the shared `bunko` layer.

api: the FastAPI app behind Mangum (buffered routes, 29 s). stream: the same app under
uvicorn with the Lambda Web Adapter layer in response_stream mode (/chat/stream, /mcp; up to
15 minutes). ingest: the SQS consumer. All three read their configuration from BUNKO_*
variables (bunko.adapters.aws.settings).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from aws_cdk import (
    AssetHashType,
    Aws,
    BundlingOptions,
    CfnCondition,
    DockerImage,
    Duration,
    Fn,
    Stack,
)
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from bunko.deploy_schema import env_name
from infra.constructs.layer_bundling import LocalLayerBundling, layer_requirements
from infra.constructs.roles import function_role

API_TIMEOUT = Duration.seconds(25)  # API Gateway's integration timeout is 29 s
API_BEDROCK_BUDGET_SECONDS = 15  # no Bedrock retry starts past this
API_BEDROCK_READ_TIMEOUT = 8  # one call's longest wait: 15 + 8 < 25 < 29
INGEST_TIMEOUT = Duration.minutes(10)
SOURCES_TIMEOUT = Duration.minutes(4)  # under the schedule's 5-minute rate
# The Lambda Web Adapter's public layer (awslabs/aws-lambda-web-adapter): one publishing
# account in every commercial region, one per region in China (its zip-packages guide).
LWA_ACCOUNT = "753240598075"
LWA_CHINA_ACCOUNTS = {"cn-north-1": "041581134020", "cn-northwest-1": "069767869989"}
_EXCLUDE = ["**/__pycache__", "**/*.pyc", "*.egg-info"]


def layer_asset_hash(repo_root: Path, python_version: str) -> str:
    """Source + requirements: the layer is rebuilt when either changes (not on every synth)."""
    digest = hashlib.sha256(python_version.encode())
    digest.update("\n".join(layer_requirements(repo_root / "pyproject.toml")).encode())
    package = repo_root / "layers" / "bunko" / "bunko"
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(package).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


class BunkoFunctions(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        repo_root: Path,
        python_version: str,
        environment: dict[str, str],
        embedding: dict[str, str],
        lwa_layer_version: int,
        embed_concurrency: int,
        stream_concurrency: int | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        runtime = lambda_.Runtime(f"python{python_version}", lambda_.RuntimeFamily.PYTHON)
        self.layer = lambda_.LayerVersion(
            self, "BunkoLayer",
            description="bunko and its AWS dependencies (local-only packages left out)",
            compatible_runtimes=[runtime],
            compatible_architectures=[lambda_.Architecture.X86_64],
            code=lambda_.Code.from_asset(
                str(repo_root / "layers" / "bunko"),
                exclude=_EXCLUDE,
                asset_hash_type=AssetHashType.CUSTOM,
                asset_hash=layer_asset_hash(repo_root, python_version),
                bundling=BundlingOptions(
                    # Only used if local bundling were unavailable; it never declines.
                    image=DockerImage.from_registry(f"public.ecr.aws/sam/build-python{python_version}"),
                    local=LocalLayerBundling(repo_root=repo_root, python_version=python_version),
                ),
            ),
        )  # fmt: skip
        common = {
            "POWERTOOLS_METRICS_NAMESPACE": "Bunko",
            "POWERTOOLS_LOG_LEVEL": "INFO",
            "BUNKO_BACKEND": "aws",
            **environment,
        }
        functions_dir = repo_root / "functions"
        # The sources' sync writes into the library and never embeds (the ingest function
        # does): it gets no embedding model, nor the endpoint's key.
        no_embedding = {env_name("embedding_provider"): "none"}

        def function(
            name: str,
            *,
            handler: str,
            timeout: Duration,
            memory: int,
            env: dict[str, str],
            layers: list[lambda_.ILayerVersion],
            reserved: int | None = None,
            embeds: bool = True,
        ) -> lambda_.Function:
            log_group = logs.LogGroup(self, f"{name}Logs", retention=logs.RetentionDays.ONE_MONTH)
            return lambda_.Function(
                self, name,
                runtime=runtime,
                architecture=lambda_.Architecture.X86_64,
                code=lambda_.Code.from_asset(str(functions_dir / name.lower()), exclude=_EXCLUDE),
                handler=handler,
                layers=[self.layer, *layers],
                timeout=timeout,
                memory_size=memory,
                reserved_concurrent_executions=reserved,
                tracing=lambda_.Tracing.ACTIVE,
                log_group=log_group,
                role=function_role(self, f"{name}Role", log_group),
                environment={
                    **common, **(embedding if embeds else no_embedding),
                    "POWERTOOLS_SERVICE_NAME": f"bunko-{name.lower()}", **env,
                },
            )  # fmt: skip

        # Under API Gateway's 29 s: the app's own time budget for Bedrock (retries included)
        # ends first, so a throttled request gets the app's 503, not the gateway's 504.
        self.api = function(
            "Api", handler="handler.handler", timeout=API_TIMEOUT, memory=1024, layers=[],
            env={
                env_name("embed_max_seconds"): str(API_BEDROCK_BUDGET_SECONDS),
                env_name("bedrock_read_timeout"): str(API_BEDROCK_READ_TIMEOUT),
            },
        )  # fmt: skip
        adapter = lambda_.LayerVersion.from_layer_version_arn(
            self, "WebAdapter", web_adapter_arn(self, lwa_layer_version)
        )
        self.stream = function(
            "Stream", handler="run.sh", timeout=Duration.minutes(15), memory=1024,
            env={
                "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap",
                "AWS_LWA_INVOKE_MODE": "response_stream",
                "AWS_LWA_PORT": "8080",
                "AWS_LWA_READINESS_CHECK_PATH": "/health/live",
            },
            layers=[adapter],
            # Its streams last up to 15 minutes: without a cap, a crowd of them could take
            # every slot of the account's concurrency from the api and ingest functions.
            reserved=stream_concurrency,
        )  # fmt: skip
        # One message per invocation (the event source's batch size is 1), so a large file
        # has the whole timeout and a timeout never sends other files back to the queue.
        self.ingest = function(
            "Ingest", handler="handler.handler", timeout=INGEST_TIMEOUT, memory=2048,
            layers=[], env={env_name("embed_concurrency"): str(embed_concurrency)},
        )  # fmt: skip
        # The sources' sync (EventBridge Scheduler, infra/constructs/sources_sync.py): its
        # syncs stop by the timeout less a margin and the next run goes on.
        self.sources = function(
            "Sources", handler="handler.handler", timeout=SOURCES_TIMEOUT, memory=1024,
            layers=[], env={}, embeds=False,
        )  # fmt: skip
        self.sources.configure_async_invoke(retry_attempts=0)
        self.all = [self.api, self.stream, self.ingest, self.sources]


def web_adapter_arn(scope: Construct, version: int) -> str:
    """The adapter layer's ARN in the region the stack is deployed to, chosen there (the
    template is region-agnostic): its partition, and its account in China's two regions."""
    stack = Stack.of(scope)
    account: str = LWA_ACCOUNT
    for region, china_account in LWA_CHINA_ACCOUNTS.items():
        condition = CfnCondition(
            scope, f"In{region.title().replace('-', '')}",
            expression=Fn.condition_equals(Aws.REGION, region),
        )  # fmt: skip
        account = Fn.condition_if(condition.logical_id, china_account, account).to_string()
    return (
        f"arn:{stack.partition}:lambda:{stack.region}:{account}"
        f":layer:LambdaAdapterLayerX86:{version}"
    )
