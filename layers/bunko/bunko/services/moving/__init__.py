"""Moving: a library into one portable archive and back, on either shape (docs/owners.md,
"Moving a library")."""

from bunko.services.moving.archive import FORMAT, VERSION, ArchiveError
from bunko.services.moving.export import ExportReport, export_library
from bunko.services.moving.imports import ImportProgress, ImportReport, import_library
from bunko.services.moving.jobs import LibraryMoves, MoveJob, archive_link
from bunko.services.moving.parts import MovingParts

__all__ = [
    "FORMAT",
    "VERSION",
    "ArchiveError",
    "ExportReport",
    "ImportProgress",
    "ImportReport",
    "LibraryMoves",
    "MoveJob",
    "MovingParts",
    "archive_link",
    "export_library",
    "import_library",
]
