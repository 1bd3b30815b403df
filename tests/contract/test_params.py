"""An AWS param whose stand-in is missing is reported as skipped, with the reason."""

from __future__ import annotations

import pytest

from tests.contract.params import AWS_NAMES, MOTO_MISSING, adapter_params, missing


def test_a_missing_stand_in_becomes_a_visible_skip():
    factories, params = adapter_params({"sqlite": iter}, "ACCOUNT_FACTORIES", needs="no moto")
    assert set(factories) == {"sqlite"}
    assert [p.id for p in params] == ["sqlite", "dynamodb"]
    aws, skip = params[1].marks
    assert aws.name == "aws" and skip.name == "skip"
    assert skip.kwargs["reason"] == "dynamodb: no moto"
    assert not params[0].marks


@pytest.mark.skipif(MOTO_MISSING is not None, reason=str(MOTO_MISSING))
def test_aws_params_are_aws_tests():
    factories, params = adapter_params({"sqlite": iter}, "ACCOUNT_FACTORIES")
    assert set(factories) == {"sqlite", "dynamodb"}
    assert {p.id: [m.name for m in p.marks] for p in params} == {"dynamodb": ["aws"], "sqlite": []}


def test_missing_names_the_absent_modules():
    assert missing("json") is None
    assert missing("json", "no_such_module_here") == "stand-in not installed: no_such_module_here"


def test_every_aws_table_has_its_names():
    assert set(AWS_NAMES) == {
        "METADATA_FACTORIES",
        "BLOB_FACTORIES",
        "SEARCH_INDEX_FACTORIES",
        "ACCOUNT_FACTORIES",
        "RESEARCH_FACTORIES",
    }
