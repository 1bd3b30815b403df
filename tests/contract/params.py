"""Which adapters a contract suite runs on, and why an AWS one is skipped.

An AWS param whose stand-in is not installed stays in the run as a skip with its reason, so a
missing moto or osmem-server shows in the report instead of silently shrinking the suite.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

Factory = Callable[..., Iterator[Any]]

# The AWS param names of each table in aws_params, known even when it cannot be imported.
AWS_NAMES: dict[str, tuple[str, ...]] = {
    "METADATA_FACTORIES": ("dynamodb",),
    "BLOB_FACTORIES": ("s3",),
    "SEARCH_INDEX_FACTORIES": ("opensearch",),
    "ACCOUNT_FACTORIES": ("dynamodb",),
    "RESEARCH_FACTORIES": ("dynamodb",),
}


def missing(*modules: str) -> str | None:
    """The skip reason when any of the modules cannot be imported, else None."""
    absent = [m for m in modules if not _importable(m)]
    return f"stand-in not installed: {', '.join(absent)}" if absent else None


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: blocked in sys.modules
        return False


MOTO_MISSING = missing("boto3", "moto")
OPENSEARCH_MISSING = MOTO_MISSING or missing("opensearchpy", "osmem_server")

if MOTO_MISSING is None:
    # Imported only when moto is there: any ImportError inside is a real bug and must fail.
    from tests.contract import aws_params
else:
    aws_params = None


def adapter_params(
    local: Mapping[str, Factory], aws: str, *, needs: str | None = MOTO_MISSING
) -> tuple[dict[str, Factory], list[Any]]:
    """(factories by param name, pytest params): the local factories, plus the `aws_params`
    table named `aws`, or its names as skipped params when `needs` gives a reason."""
    factories = dict(local)
    skipped: dict[str, str] = {}
    remote: Mapping[str, Factory] = getattr(aws_params, aws, {}) if aws_params else {}
    if needs is None:
        assert set(remote) == set(AWS_NAMES[aws]), f"AWS_NAMES[{aws!r}] is out of date"
        factories.update(remote)
    else:
        skipped = {name: needs for name in AWS_NAMES[aws]}
    # AWS params are `aws` tests (pyproject.toml's markers), like everything under tests/aws/
    params = [
        pytest.param(name, id=name, marks=[pytest.mark.aws] if name in remote else [])
        for name in sorted(factories)
    ]
    params += [
        pytest.param(
            name, id=name, marks=[pytest.mark.aws, pytest.mark.skip(reason=f"{name}: {reason}")]
        )
        for name, reason in sorted(skipped.items())
    ]
    return factories, params
