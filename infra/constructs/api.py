"""The REST API: everything buffered through the api function, except /chat/stream, /mcp and
the OpenAI-compatible /v1 routes, which stream from the stream function (responseTransferMode
STREAM, up to 15 minutes)."""

from __future__ import annotations

import json
from http import HTTPStatus

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

STREAMING_PATHS = ("chat/stream", "mcp", "v1")
STREAM_TIMEOUT = Duration.minutes(15)
# Bodies passed through as bytes (base64 in the Lambda event) and responses returned as
# binary when the function base64-encodes them: uploads, originals, LibreOffice's PDFs and
# images. JSON and text stay text.
BINARY_MEDIA_TYPES = [
    "multipart/form-data", "application/octet-stream", "application/pdf", "application/zip",
    "application/vnd.openxmlformats-officedocument.*", "application/vnd.oasis.opendocument.*",
    "application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint",
    "image/*",
]  # fmt: skip
# Errors API Gateway answers itself, in the app's error body {statusCode, message, error}.
_PRESIGN = "upload large files with POST /uploads/presign"
GATEWAY_ERRORS = {
    apigw.ResponseType.REQUEST_TOO_LARGE: (413, f"request body is over API Gateway's limit: {_PRESIGN}"),
    apigw.ResponseType.THROTTLED: (429, "too many requests: slow down and retry"),
    apigw.ResponseType.INTEGRATION_TIMEOUT: (504, "the request took too long"),
    # Also what a request over Lambda's 6 MB invoke payload gets (it never reaches the app).
    apigw.ResponseType.INTEGRATION_FAILURE: (502, f"the function failed; if this was a large upload, {_PRESIGN}"),
}  # fmt: skip


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
            # REGIONAL, not edge-optimized: an edge API sits behind CloudFront, which cuts a
            # streamed response after 30 s without bytes; a regional one allows 5 minutes.
            endpoint_configuration=apigw.EndpointConfiguration(
                types=[apigw.EndpointType.REGIONAL]
            ),
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
            binary_media_types=BINARY_MEDIA_TYPES,
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

    def answer_gateway_errors(self, cors_origins: list[str]) -> None:
        """The app's error body on the gateway's own errors (413, 429, 502, 504 and the
        defaults), readable by the browser: without CORS the web app sees "network error".

        A gateway response cannot choose among origins as the app's CORS does: one allowed
        origin (the web app's alone) is named; with several, the caller's Origin is echoed.
        Echoing is safe here: these bodies are the gateway's fixed texts, and the API never
        allows credentials (bearer tokens, not cookies)."""
        if not cors_origins:
            headers = {}
        elif len(cors_origins) == 1:
            headers = {"Access-Control-Allow-Origin": f"'{cors_origins[0]}'", "Vary": "'Origin'"}
        else:
            headers = {
                "Access-Control-Allow-Origin": "method.request.header.Origin",
                "Vary": "'Origin'",
            }
        for response_type, (status, message) in GATEWAY_ERRORS.items():
            body = {"statusCode": status, "message": message, "error": HTTPStatus(status).phrase}
            self.api.add_gateway_response(
                f"Gateway{response_type.response_type}", type=response_type,
                status_code=str(status), response_headers=headers,
                templates={"application/json": json.dumps(body)},
            )  # fmt: skip
        for response_type in (apigw.ResponseType.DEFAULT_4_XX, apigw.ResponseType.DEFAULT_5_XX):
            self.api.add_gateway_response(
                f"Gateway{response_type.response_type}", type=response_type,
                response_headers=headers,
                templates={"application/json": '{"message": $context.error.messageString, '
                           '"error": "$context.error.responseType"}'},
            )  # fmt: skip
