"""An AWS param whose stand-in is missing is reported as skipped, with the reason."""

from __future__ import annotations

from tests.contract.params import AWS_NAMES, adapter_params, missing


def test_a_missing_stand_in_becomes_a_visible_skip():
    factories, params = adapter_params({"sqlite": iter}, "ACCOUNT_FACTORIES", needs="no moto")
    assert set(factories) == {"sqlite"}
    assert [p.id for p in params] == ["sqlite", "dynamodb"]
    (mark,) = params[1].marks
    assert mark.name == "skip" and mark.kwargs["reason"] == "dynamodb: no moto"
    assert not params[0].marks


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
