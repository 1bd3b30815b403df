"""The layout's rules (DESIGN, "Architecture: ports and adapters"), checked on the source:
which package may import which, where adapters are built, and how big a module may grow."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "bunko" / "bunko"
REPO = PACKAGE.parents[2]
MAX_LINES = 300


def modules(under: str = "") -> list[Path]:
    return sorted((PACKAGE / under).rglob("*.py"))


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


def test_adapters_import_only_domain_ports_errors_and_their_sdk():
    allowed = (
        "bunko.adapters",
        "bunko.domain",
        "bunko.ports",
        "bunko.errors",
        "bunko.deploy_schema",
    )
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


def test_no_module_is_over_the_size_limit():
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in modules()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


# The service wings and what each may import of the others: the graph runs one way, so a
# wing can be read (and changed) knowing only the faces below it.
WING_IMPORTS = {
    "bounds": set(),
    "embedding": {"bounds"},
    "settings": {"bounds"},
    "search": {"bounds", "embedding"},
    "ingest": {"bounds", "embedding"},
    "conversion": {"bounds", "ingest"},
    "research": {"bounds", "search"},
    "chat": {"bounds", "embedding", "search", "settings"},
    "accounts": {"bounds", "chat", "embedding", "ingest", "research"},
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
