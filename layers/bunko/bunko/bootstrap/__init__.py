"""The composition root: the only place adapters are built and wired to services.

- `root`: `build_services(settings)` for either shape, and the `Services` it returns;
- `local`, `aws`: each shape's adapters;
- one builder per wing (`embedding`, `ingest`, `settings`, `search`, `chat`, `research`,
  `accounts`), each returning its bundle from the ports and the wings below it;
- `background`: what the embedded server runs beside the app (worker resume, reindex);
- `functions`: the Lambda functions' graphs (bunko/lambda_entry.py caches them).
It imports no door (http, mcp, drops): the doors, and what composes them, sit above it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bunko.lazy_exports import lazy_face

if TYPE_CHECKING:
    from bunko.bootstrap.accounts import AccountServices
    from bunko.bootstrap.background import index_needs_rebuild, requeue_unfinished
    from bunko.bootstrap.local import index_generation
    from bunko.bootstrap.root import Services, build_services, wire_services

__all__ = [
    "AccountServices",
    "Services",
    "build_services",
    "index_generation",
    "index_needs_rebuild",
    "requeue_unfinished",
    "wire_services",
]

# Resolved on first use (PEP 562), so `bunko.bootstrap.functions` — what a Lambda
# handler's first call imports — does not pull in every service and parser with it.
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "AccountServices": "accounts",
        "index_needs_rebuild": "background",
        "requeue_unfinished": "background",
        "index_generation": "local",
        "Services": "root",
        "build_services": "root",
        "wire_services": "root",
    },
)
