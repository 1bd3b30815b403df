"""JSON Schemas copied verbatim from external contracts (shared/seeds/), advertised as is.

`research_corpora_get` is specified to the byte by the sosoapi tool page; its pydantic models
validate the same rules, and advertise these schemas instead of their generated ones.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def _load(name: str) -> dict[str, Any]:
    text = (
        resources.files("bunko.operations").joinpath("schemas", f"{name}.json").read_text("utf-8")
    )
    return json.loads(text)


def contract_schema(name: str, part: str) -> dict[str, Any]:
    """A fresh copy of a contract's `input` or `output` schema."""
    return copy.deepcopy(_load(name)[part])
