"""A custom resource that creates the search index once the collection accepts requests.

Access policies take a while to reach the collection's data plane, so the Provider
framework polls `is_complete` (functions/search_index) until the index exists.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import CustomResource, Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import custom_resources as cr
from constructs import Construct

from infra.constructs.roles import function_role

# The fields the search index maps (adapters/aws/opensearch/queries.index_body; a test holds
# the two alike). Named in the custom resource's properties: a field added here is an Update,
# on which the setup function maps it on the index an older Bunko created.
MAPPED_FIELDS = (
    "category", "chunk_id", "document_id", "entry_id", "metadata_terms", "revision", "text",
    "vector", "workspace_id",
)  # fmt: skip
MAPPING_VERSION = ",".join(MAPPED_FIELDS)


class SearchIndexSetup(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        code_dir: Path,
        layer: lambda_.ILayerVersion,
        runtime: lambda_.Runtime,
        endpoint: str,
        index_name: str,
        dimension: int,
    ) -> None:
        super().__init__(scope, construct_id)

        def handler(name: str, entry: str) -> lambda_.Function:
            log_group = logs.LogGroup(self, f"{name}Logs", retention=logs.RetentionDays.ONE_MONTH)
            return lambda_.Function(
                self, name,
                runtime=runtime,
                architecture=lambda_.Architecture.X86_64,
                code=lambda_.Code.from_asset(str(code_dir), exclude=["**/__pycache__"]),
                handler=f"handler.{entry}",
                layers=[layer],
                timeout=Duration.minutes(1),
                memory_size=512,
                log_group=log_group,
                role=function_role(self, f"{name}Role", log_group),
                environment={"POWERTOOLS_SERVICE_NAME": "bunko-index-setup"},
            )  # fmt: skip

        self.on_event = handler("OnEvent", "on_event")
        self.is_complete = handler("IsComplete", "is_complete")
        provider = cr.Provider(
            self, "Provider",
            on_event_handler=self.on_event,
            is_complete_handler=self.is_complete,
            query_interval=Duration.seconds(20),
            total_timeout=Duration.minutes(20),
            log_group=logs.LogGroup(self, "ProviderLogs", retention=logs.RetentionDays.ONE_MONTH),
            disable_waiter_state_machine_logging=False,
            waiter_state_machine_log_options=cr.LogOptions(
                destination=logs.LogGroup(self, "WaiterLogs", retention=logs.RetentionDays.ONE_MONTH),
                level=sfn.LogLevel.ALL,
            ),
        )  # fmt: skip
        self.resource = CustomResource(
            self, "Index",
            service_token=provider.service_token,
            resource_type="Custom::BunkoSearchIndex",
            properties={
                "Endpoint": endpoint, "IndexName": index_name, "Dimension": str(dimension),
                # A new value makes CloudFormation send an Update, so the setup function adds
                # the fields a newer Bunko maps to an index an older one created.
                "Mapping": MAPPING_VERSION,
            },
        )  # fmt: skip
        self.roles = [self.is_complete.role]
