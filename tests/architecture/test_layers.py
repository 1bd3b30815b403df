"""The layout's rules (DESIGN, "Architecture: ports and adapters"), checked on the source:
which package may import which, where adapters are built, and how big a module may grow."""

from __future__ import annotations

import ast
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tests.architecture.source import ABOVE_DOORS, DOORS, PACKAGE, REPO, door_modules, modules

# A module past SOFT_LINES is worth a look (a warning in the test summary), never a wall: a
# seam decides where to split, not the count. The wall there was made code pack lines under
# `# fmt: skip` (148 lines in the package); the formatter formats, and a marker is kept only
# for a hand-laid table (word lists, a settings schema): at most MAX_FMT_SKIPS of them.
SOFT_LINES = 300
MAX_FMT_SKIPS = 10


def imported(path: Path) -> set[str]:
    """Every module a file imports, at any depth (function-local imports included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def offenders(under: str, forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in modules(under)
        for name in sorted(imported(path))
        if name.startswith(forbidden)
    ]


# The modules of floor 0 beside domain/ (docs/architecture.md): every layer may import them,
# and they import nothing of Bunko's.
FLOOR_ZERO_MODULES = (
    "bunko.errors",
    "bunko.deploy_schema",
    "bunko.lazy_exports",
    "bunko.scheduler",
)


def test_the_floor_zero_modules_import_nothing_of_bunkos():
    bad = [
        f"{module} imports {name}"
        for module in FLOOR_ZERO_MODULES
        for name in sorted(imported(PACKAGE / f"{module.removeprefix('bunko.')}.py"))
        if name.startswith("bunko")
    ]
    assert bad == []


def test_adapters_import_only_domain_ports_errors_and_their_sdk():
    allowed = ("bunko.adapters", "bunko.domain", "bunko.ports", *FLOOR_ZERO_MODULES)
    bad = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in modules("adapters")
        for name in sorted(imported(path))
        if name.startswith("bunko") and not name.startswith(allowed)
    ]
    assert bad == []


def test_services_import_no_adapter_and_no_door():
    assert (
        offenders("services", ("bunko.adapters", "bunko.http", "bunko.mcp", "bunko.bootstrap"))
        == []
    )


def test_ports_and_domain_depend_on_nothing_outward():
    outward = ("bunko.adapters", "bunko.services", "bunko.http", "bunko.mcp", "bunko.bootstrap")
    assert offenders("ports", outward) == []
    assert offenders("domain", (*outward, "bunko.ports")) == []


def test_adapters_are_built_only_in_bootstrap():
    """Outside bootstrap/ (and the adapters themselves), nothing imports an adapter module,
    except the doors' own AWS parsing of S3 events, which has no port of its own."""
    allowed_doors = {"drops/s3_events.py"}
    bad = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in modules()
        if not str(path.relative_to(PACKAGE)).startswith(("adapters/", "bootstrap/"))
        and str(path.relative_to(PACKAGE)) not in allowed_doors
        for name in sorted(imported(path))
        if name.startswith("bunko.adapters")
    ]
    assert bad == []


def test_infra_imports_only_the_dependency_free_schema_and_no_aws_sdk():
    infra = REPO / "infra"
    used = {
        name
        for path in infra.rglob("*.py")
        if "node_modules" not in path.parts and "cdk.out" not in path.parts
        for name in imported(path)
        if name.startswith("bunko")
    }
    assert used <= {"bunko.deploy_schema"}, used
    pytest.importorskip("aws_cdk", reason="the cdk extra is not installed")
    probe = (
        "import sys; import infra.stacks.bunko_stack; "
        "print(sorted(m for m in ('boto3', 'botocore', 'opensearchpy') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_deploy_schema_names_every_aws_setting():
    from bunko.adapters.aws.settings import AwsSettings
    from bunko.deploy_schema import AWS_SETTING_FIELDS

    assert set(AwsSettings.model_fields) == AWS_SETTING_FIELDS


def test_the_formatter_formats_and_long_modules_are_named_not_walled():
    texts = {str(path.relative_to(PACKAGE)): path.read_text(encoding="utf-8") for path in modules()}
    long = {name: len(text.splitlines()) for name, text in texts.items()}
    long = {name: n for name, n in long.items() if n > SOFT_LINES}
    if long:
        warnings.warn(f"modules over {SOFT_LINES} lines, worth a look: {long}", stacklevel=1)
    skips = {name: text.count("# fmt: skip") for name, text in texts.items()}
    assert sum(skips.values()) <= MAX_FMT_SKIPS, {name: n for name, n in skips.items() if n}


# The service wings and what each may import of the others: the graph runs one way, so a
# wing can be read (and changed) knowing only the faces below it.
WING_IMPORTS = {
    "bounds": set(),
    "embedding": {"bounds"},
    "settings": {"bounds"},
    "search": {"bounds", "embedding"},
    "library": set(),
    "ingest": {"bounds", "embedding", "library"},
    "conversion": {"bounds", "ingest"},
    "research": {"bounds", "search"},
    "chat": {"bounds", "embedding", "search", "settings"},
    "accounts": {"bounds", "chat", "embedding", "ingest", "research"},
    "sources": {"ingest", "library"},
    "moving": {"accounts", "chat", "ingest", "library", "settings", "sources"},
}


def test_services_are_the_wings_and_nothing_else():
    wings = {p.name for p in (PACKAGE / "services").iterdir() if (p / "__init__.py").exists()}
    loose = [p.name for p in (PACKAGE / "services").glob("*.py") if p.name != "__init__.py"]
    assert wings == set(WING_IMPORTS)
    assert loose == []


def test_a_wing_imports_only_the_faces_of_the_wings_below_it():
    bad = []
    for wing, allowed in WING_IMPORTS.items():
        for path in modules(f"services/{wing}"):
            for name in sorted(imported(path)):
                parts = name.split(".")
                if parts[:2] != ["bunko", "services"] or len(parts) < 3 or parts[2] == wing:
                    continue
                if parts[2] not in allowed or len(parts) > 3:
                    bad.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert bad == []


def test_outside_services_only_a_wing_face_is_imported():
    """Doors, bootstrap and the rest take a wing's public names from its __init__."""
    bad = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in modules()
        if not str(path.relative_to(PACKAGE)).startswith("services/")
        for name in sorted(imported(path))
        if name.startswith("bunko.services.") and len(name.split(".")) > 3
    ]
    assert bad == []


def test_outside_the_local_engine_only_its_face_is_imported():
    """bootstrap/ and the other adapters take the local search engine's names from
    bunko.adapters.local.engine, never from one of its modules (tests of a part may)."""
    engine = PACKAGE / "adapters" / "local" / "engine"
    parts = {p.stem for p in engine.glob("[!_]*.py")}
    bad = sorted(
        {
            f"{path.relative_to(PACKAGE)} imports bunko.adapters.local.engine.{part}"
            for path in modules()
            if engine not in path.parents
            for name in imported_names(path)
            if name.startswith("bunko.adapters.local.engine.")
            and (part := name.split(".")[4]) in parts
        }
    )
    assert bad == []


# What the doors share, below them.
SHARED_BY_DOORS = ("bunko.asgi", "bunko.operations")


def imported_names(path: Path) -> set[str]:
    """`imported`, plus each name a from-import takes: `from bunko import lambda_entry` is
    an import of bunko.lambda_entry."""
    names = imported(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def within(name: str, packages: tuple[str, ...]) -> bool:
    """`name` is one of `packages` or inside one; `bunko.cli` stands for every bunko.cli*
    module (cli_options, cli_users, cli_agents)."""
    return any(
        name == p or name.startswith(f"{p}.") or (p == "bunko.cli" and name.startswith(p))
        for p in packages
    )


def layer_offenders(under: str, forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in modules(under)
        for name in sorted(imported_names(path))
        if within(name, forbidden)
    ]


def test_no_door_imports_another_door_or_what_composes_them():
    bad = [
        offence
        for door in DOORS
        for offence in layer_offenders(
            door.removeprefix("bunko."), (*(d for d in DOORS if d != door), *ABOVE_DOORS)
        )
    ]
    assert bad == []


def test_bootstrap_imports_no_door():
    """The composition root builds what the doors call: it imports no door, nothing the doors
    share (run-time pieces such as ASGI middleware live in the layer they serve), and nothing
    that composes doors (the Lambda entry is bunko/lambda_entry.py)."""
    assert layer_offenders("bootstrap", (*DOORS, *SHARED_BY_DOORS, *ABOVE_DOORS)) == []


def test_what_the_doors_share_lies_below_them():
    """asgi/ (error bodies, body limits, hardening, API Gateway) and operations/ (the research
    operations REST and MCP both offer) import no door, no composition, no adapter; services,
    ports and domain do not import them."""
    above = (*DOORS, *ABOVE_DOORS, "bunko.bootstrap", "bunko.adapters")
    bad = [offence for shared in SHARED_BY_DOORS
           for offence in layer_offenders(shared.removeprefix("bunko."), above)]  # fmt: skip
    bad += [offence for inner in ("services", "ports", "domain")
            for offence in layer_offenders(inner, SHARED_BY_DOORS)]  # fmt: skip
    assert bad == []


def test_the_architecture_page_lists_the_wings_as_the_tests_hold_them():
    """docs/architecture.md's table of wings: each wing and what it may import."""
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = {}
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and cells[0].strip("`") in WING_IMPORTS:
            may = set() if cells[2] == "—" else {w.strip() for w in cells[2].split(",")}
            table[cells[0].strip("`")] = may
    assert table == WING_IMPORTS


# What the services container holds beside its services: the raw ports (the metadata store,
# the search index, the blob store, the ingest queue, the server's embedder). A door asks a
# service (`services.items`, `.ingest`, `.status`, ...) and never reaches past it to a port,
# through the container or through a service.
RAW_PORTS = {"metadata", "index", "blobs", "queue", "embedder"}
SERVICE_NAMES = {
    "services", "ingest", "items", "library", "pipeline", "search", "status", "knowledge_base"
}  # fmt: skip


def test_doors_reach_no_raw_port_past_the_services():
    bad = []
    for path in door_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Attribute) or node.attr not in RAW_PORTS:
                continue
            owner = node.value
            name = getattr(owner, "id", None) or getattr(owner, "attr", None)
            if name in SERVICE_NAMES:
                bad.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {name}.{node.attr}")
    assert bad == []


STORES = ("sqlite", "dynamodb", "opensearch", "s3")


def test_each_store_has_its_own_package_in_the_adapters():
    """A store's modules live in adapters/<shape>/<store>/, not as <store>_* beside the rest."""
    loose = [
        str(path.relative_to(PACKAGE))
        for path in modules("adapters")
        if path.stem.startswith(tuple(f"{store}_" for store in STORES))
    ]
    assert loose == []
    for shape, store in (
        ("local", "sqlite"),
        ("aws", "dynamodb"),
        ("aws", "opensearch"),
        ("aws", "s3"),
    ):
        assert (PACKAGE / "adapters" / shape / store / "__init__.py").exists()
