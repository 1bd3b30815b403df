"""CloudFormation custom resource (CDK Provider framework): create the search index.

The collection's data access policy takes a while to reach the data plane after the stack
creates it, so `on_event` only starts and `is_complete` tries, answering "not yet" to 403s
until the provider's total timeout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

if TYPE_CHECKING:
    from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex

logger = Logger()
_PENDING_STATUSES = {401, 403, 404}  # policy or collection not visible to the data plane yet


def _index(props: dict[str, Any]) -> OpenSearchServerlessIndex:
    # Imported here, not at module load: opensearch-py and boto3 cost seconds of cold start,
    # and on_event (the first call of every deploy) needs neither.
    from bunko.adapters.aws.clients import opensearch_client
    from bunko.adapters.aws.opensearch.index import OpenSearchServerlessIndex
    from bunko.adapters.aws.settings import AwsSettings

    aws = AwsSettings(opensearch_endpoint=props["Endpoint"], opensearch_index=props["IndexName"])
    dimension = int(props["Dimension"]) or None
    return OpenSearchServerlessIndex(
        opensearch_client(aws), index=aws.opensearch_index, dimension=dimension
    )


@logger.inject_lambda_context
def on_event(event: dict[str, Any], context: Any) -> dict[str, Any]:
    props = event["ResourceProperties"]
    # The index name is the physical id: a new name (another model) is a new index, and the
    # old one stays until the collection goes, so a reindex can fill the new one first.
    return {"PhysicalResourceId": props["IndexName"]}


@logger.inject_lambda_context
def is_complete(event: dict[str, Any], context: Any) -> dict[str, Any]:
    if event["RequestType"] == "Delete":
        return {"IsComplete": True}
    from opensearchpy.exceptions import AuthorizationException, TransportError
    from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError

    try:
        created = _index(event["ResourceProperties"]).ensure_index()
    except (AuthorizationException, OpenSearchConnectionError) as exc:
        logger.info("index not reachable yet", extra={"error": str(exc)})
        return {"IsComplete": False}
    except TransportError as exc:
        if exc.status_code in _PENDING_STATUSES:
            logger.info("index not reachable yet", extra={"status": exc.status_code})
            return {"IsComplete": False}
        raise
    logger.info("index ready", extra={"index_created": created})
    return {"IsComplete": True}
