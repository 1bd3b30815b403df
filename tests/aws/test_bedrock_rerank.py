"""Bedrock Rerank names its model by an ARN in the client's own partition: a fixed `arn:aws`
is refused in AWS GovCloud (aws-us-gov) and China (aws-cn). botocore's Stubber checks the
request against the service's shape."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import ANY, Stubber

from bunko.adapters.aws.bedrock_rerank import BedrockRerank

MODEL = "cohere.rerank-v3-5:0"


@pytest.mark.parametrize(
    ("region", "partition"),
    [("us-west-2", "aws"), ("us-gov-west-1", "aws-us-gov"), ("cn-north-1", "aws-cn")],
)
def test_the_model_arn_is_in_the_clients_partition(region, partition):
    client = boto3.client(
        "bedrock-agent-runtime", region_name=region,
        aws_access_key_id="test", aws_secret_access_key="test",
    )  # fmt: skip
    with Stubber(client) as stub:
        stub.add_response(
            "rerank",
            {"results": [{"index": 1, "relevanceScore": 0.9}, {"index": 0, "relevanceScore": 0.1}]},
            {
                "queries": ANY,
                "sources": ANY,
                "rerankingConfiguration": {
                    "type": "BEDROCK_RERANKING_MODEL",
                    "bedrockRerankingConfiguration": {
                        "numberOfResults": 2,
                        "modelConfiguration": {
                            "modelArn": f"arn:{partition}:bedrock:{region}::foundation-model/{MODEL}"
                        },
                    },
                },
            },
        )
        hits = BedrockRerank(client, model=MODEL).rerank("q", ["a", "b"], 2)
        stub.assert_no_pending_responses()
    assert [h.index for h in hits] == [1, 0]
