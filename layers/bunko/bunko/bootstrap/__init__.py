"""The composition root: the only place adapters are built and wired to services.

- `root`: `build_services(settings)` for either shape, and the `Services` it returns;
- `local`, `aws`: each shape's adapters; `accounts`: the account services;
- `background`: what the embedded server runs beside the app (worker resume, reindex, watchers);
- `lambda_entry`: what the Lambda functions in `functions/` call.
"""

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
