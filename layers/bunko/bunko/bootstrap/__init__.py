"""The composition root: the only place adapters are built and wired to services.

- `root`: `build_services(settings)` for either shape, and the `Services` it returns;
- `local`, `aws`: each shape's adapters; `accounts`: the account services;
- `background`: what the embedded server runs beside the app (worker resume, reindex);
- `functions`: the Lambda functions' graphs (bunko/lambda_entry.py caches them).
It imports no door (http, mcp, drops): the doors, and what composes them, sit above it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bunko.bootstrap.accounts import AccountServices
    from bunko.bootstrap.background import index_needs_rebuild, requeue_unfinished
    from bunko.bootstrap.local import index_generation
    from bunko.bootstrap.root import Services, build_services, wire_services

# Resolved on first use (PEP 562), so `bunko.bootstrap.functions` — what a Lambda
# handler's first call imports — does not pull in every service and parser with it.
_EXPORTS = {
    "AccountServices": "accounts",
    "index_needs_rebuild": "background",
    "requeue_unfinished": "background",
    "index_generation": "local",
    "Services": "root",
    "build_services": "root",
    "wire_services": "root",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bunko.bootstrap' has no attribute {name!r}")
    return getattr(importlib.import_module(f"bunko.bootstrap.{module}"), name)


__all__ = [
    "AccountServices",
    "Services",
    "build_services",
    "index_generation",
    "index_needs_rebuild",
    "requeue_unfinished",
    "wire_services",
]
