"""The REST API: everything buffered through the api function, except /chat/stream, /mcp and
the OpenAI-compatible /v1 routes, which stream from the stream function (responseTransferMode
STREAM, up to 15 minutes)."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

STREAMING_PATHS = ("chat/stream", "mcp", "v1")
STREAM_TIMEOUT = Duration.minutes(15)


class RestApi(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        api_function: lambda_.IFunction,
        stream_function: lambda_.IFunction,
        stage_name: str,
    ) -> None:
        super().__init__(scope, construct_id)
        access_logs = logs.LogGroup(self, "AccessLogs", retention=logs.RetentionDays.THREE_MONTHS)
        self.api = apigw.RestApi(
            self, "Api",
            description="Bunko REST API, MCP and streaming chat",
            cloud_watch_role=True,
            deploy_options=apigw.StageOptions(
                stage_name=stage_name,
                tracing_enabled=True,
                logging_level=apigw.MethodLoggingLevel.ERROR,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=False, http_method=True, ip=True, protocol=True, request_time=True,
                    resource_path=True, response_length=True, status=True, user=False,
                ),
                throttling_rate_limit=100,
                throttling_burst_limit=200,
            ),
            binary_media_types=["multipart/form-data", "application/octet-stream"],
        )  # fmt: skip
        buffered = apigw.LambdaIntegration(api_function, proxy=True)
        streaming = apigw.LambdaIntegration(
            stream_function, proxy=True,
            response_transfer_mode=apigw.ResponseTransferMode.STREAM,
            timeout=STREAM_TIMEOUT,
        )  # fmt: skip
        self.api.root.add_method("ANY", buffered)
        self.api.root.add_resource("{proxy+}").add_method("ANY", buffered)
        for path in STREAMING_PATHS:
            resource = self.api.root.resource_for_path(path)
            resource.add_method("ANY", streaming)
            resource.add_resource("{proxy+}").add_method("ANY", streaming)
        self.url = self.api.url
