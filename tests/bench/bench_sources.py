"""What a connector's sync costs (issue 48): a 1,000-page website on a local socket and a
1,000-file Git repository, each synced into an empty keyword-only library, re-synced with
nothing changed, then re-synced with 1% of it changed.

    .venv/bin/python -m tests.bench.bench_sources [--pages 1000] [--files 1000]

Prints, per sync: its seconds (reading the place and writing the library; indexing runs
behind it and is timed apart), the requests made, the pages or files fetched (bodies
downloaded, blobs read), and what it added, changed and deleted.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tests.conftest import make_services
from tests.e2e.git_repo import Repo
from tests.e2e.local_site import LocalSite

WORDS = [
    "policy",
    "travel",
    "leave",
    "remote",
    "office",
    "budget",
    "review",
    "hiring",
    "security",
    "backup",
]


def page_text(n: int, edition: int = 0) -> str:
    words = " ".join(WORDS[(n + i) % len(WORDS)] for i in range(60))
    return f"Page {n} (edition {edition}). {words}."


def line(label: str, report, drained: float | None = None) -> str:
    idx = "" if drained is None else f", indexed {drained:.1f} s later"
    return (
        f"{label:<22} {report.seconds:7.2f} s  requests {report.requests:5}  fetched "
        f"{report.fetched:5}  +{len(report.added)} ~{len(report.changed)} "
        f"-{len(report.deleted)} ={report.unchanged}{idx}"
    )


def drain(services) -> float:
    started = time.monotonic()
    services.ingest.wait_for_queue(timeout=3600)
    return time.monotonic() - started


def bench_web(services, pages: int) -> None:
    site = LocalSite()
    sections = max(1, pages // 100)
    per = pages // sections
    links = "".join(f"<a href='/s{s}/'>section {s}</a> " for s in range(sections))
    site.html("/", f"<main><p>Home.</p>{links}</main>", title="Home")
    count = 1
    for s in range(sections):
        items = "".join(f"<li><a href='/s{s}/p{i}.html'>{i}</a></li>" for i in range(per))
        site.html(f"/s{s}/", f"<main><p>Section {s}.</p><ul>{items}</ul></main>", title=f"S{s}")
        count += 1
        for i in range(per):
            if count >= pages:
                break
            site.html(f"/s{s}/p{i}.html", f"<main><p>{page_text(count)}</p></main>", title=f"{i}")
            count += 1
    services.sources.add(
        "default", "web", "site", {"url": site.url + "/", "max_pages": pages}, operator=True
    )
    print(f"website: {len(site.pages)} pages")
    first = services.sources.sync("default", "site")
    print(line("from empty", first, drain(services)))
    print(line("nothing changed", services.sources.sync("default", "site")))
    changed = [p for p in site.pages if p.endswith(".html")][:: max(1, pages // (pages // 100))]
    for n, path in enumerate(changed[: pages // 100]):
        site.html(path, f"<main><p>{page_text(n, 1)}</p></main>", title="changed")
    print(
        line(
            f"{pages // 100} pages changed",
            services.sources.sync("default", "site"),
            drain(services),
        )
    )
    site.close()


def bench_git(services, files: int, root: Path) -> None:
    repo = Repo(root / "repo")
    for n in range(files):
        repo.write(f"docs/d{n // 100}/f{n}.md", page_text(n) + "\n")
    repo.commit("first")
    services.sources.add("default", "git", "repo", {"url": str(repo.root)}, operator=True)
    print(f"repository: {files} files")
    first = services.sources.sync("default", "repo")
    print(line("from empty", first, drain(services)))
    print(line("same commit", services.sources.sync("default", "repo")))
    step = 100
    for n in range(0, files, step):
        repo.write(f"docs/d{n // 100}/f{n}.md", page_text(n, 1) + "\n")
    repo.commit("1% changed")
    print(
        line(
            f"{files // step} files changed",
            services.sources.sync("default", "repo"),
            drain(services),
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        services = make_services(Path(tmp) / "web", embedder="none")
        bench_web(services, args.pages)
        services.close()
        services = make_services(Path(tmp) / "git", embedder="none")
        bench_git(services, args.files, Path(tmp))
        services.close()


if __name__ == "__main__":
    main()
