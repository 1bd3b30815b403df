"""The handler tests run with the layer's botocore (tests/aws/conftest.py, layer_botocore):
the services whose models the layer keeps build, any other fails as on Lambda."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import UnknownServiceError

from infra.constructs.layer_bundling import BOTOCORE_SERVICES


def test_a_service_the_layer_strips_cannot_be_built():
    with pytest.raises(UnknownServiceError):
        boto3.client("lambda", region_name="us-east-1")


@pytest.mark.parametrize("service", sorted(BOTOCORE_SERVICES))
def test_every_service_the_layer_keeps_builds(service):
    assert boto3.client(service, region_name="us-east-1").meta.service_model.service_name
