"""The `bunko` command: serve | ingest | search | reindex | eval | audit | export | import |
source | apikey | user."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Annotated

import typer

from bunko.cli_agents import apikey_app, mcp_command
from bunko.cli_answers import missing
from bunko.cli_moving import export_command, import_command
from bunko.cli_options import (
    DataDir,
    LibraryName,
    command_settings,
    library_label,
    library_workspace,
    wait_with_progress,
)
from bunko.cli_sources import source_app
from bunko.cli_users import user_app
from bunko.config import Settings

app = typer.Typer(help="Bunko: a knowledge base for people and AI agents.", no_args_is_help=True)


def _services(settings: Settings):
    from bunko.bootstrap import build_services

    return build_services(settings)


@app.command()
def serve(
    data_dir: DataDir = None,
    host: Annotated[str | None, typer.Option(help="Bind address (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="REST port (default 3000).")] = None,
    mcp_port: Annotated[int | None, typer.Option(help="MCP port (default 3001).")] = None,
    watch: Annotated[bool, typer.Option(help="Watch the drop folder.")] = True,
) -> None:
    """Run the HTTP server and the drop-folder watcher."""
    import uvicorn

    from bunko.embedded_server import run_server

    settings = command_settings(data_dir, host=host, port=port, mcp_port=mcp_port)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    run_server(settings, watch=watch, uvicorn_run=uvicorn.run)


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to ingest.")],
    data_dir: DataDir = None,
    category: Annotated[str | None, typer.Option(help="Category for every file.")] = None,
    metadata: Annotated[
        str | None,
        typer.Option(help='Metadata for every file, a JSON object: \'{"team": "legal"}\'.'),
    ] = None,
    library: LibraryName = None,
) -> None:
    """Ingest files (folders recursively) and wait until they are indexed."""
    from bunko.domain.metadata import decode_json, given_metadata
    from bunko.domain.sources import CLI
    from bunko.errors import BunkoError, ValidationError
    from bunko.services.ingest import Upload

    try:
        raw = decode_json(metadata, "--metadata")
        given = given_metadata(raw)
    except ValidationError as exc:
        raise typer.BadParameter(str(exc), param_hint="--metadata") from exc
    services = _services(command_settings(data_dir))
    workspace = library_workspace(services, library)
    files = [p for path in paths for p in ([path] if path.is_file() else sorted(path.rglob("*")))]
    files = [f for f in files if f.is_file() and not f.name.startswith(".")]
    submitted = []
    for f in files:
        try:
            submitted.append(
                services.ingest.submit(
                    Upload(
                        workspace,
                        f.read_bytes(),
                        path=f.as_posix(),
                        category=category,
                        source=CLI,
                        metadata=given,
                    )
                )
            )
        except BunkoError as exc:
            typer.echo(f"skipped {f}: {exc}", err=True)
    wait_with_progress(services, workspace, [doc.id for doc in submitted], "indexing")
    failed = 0
    for doc in submitted:
        final = services.library.find(workspace, doc.id)
        if final and final.status == "failed":
            failed += 1
            typer.echo(f"failed {final.path}: {final.error}", err=True)
    typer.echo(
        f"{len(submitted) - failed} indexed, {failed} failed, "
        f"in library {library_label(services, workspace)!r}"
    )
    services.close()
    raise typer.Exit(1 if failed else 0)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for (English, Japanese, ...).")],
    data_dir: DataDir = None,
    limit: Annotated[int, typer.Option(help="Results to show.")] = 5,
    min_score: Annotated[float, typer.Option(help="Similarity cut-off in [0, 1].")] = 0.3,
    category: Annotated[str | None, typer.Option(help="Only this category.")] = None,
    filter: Annotated[
        str | None,
        typer.Option(
            "--filter",
            help="Only files whose metadata passes this JSON filter: "
            '\'{"equals": {"key": "team", "value": "legal"}}\' (docs/rest.md, "Metadata").',
        ),
    ] = None,
    method: Annotated[
        str | None, typer.Option(help="convex | rrf | max | keyword | vector")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the search_text JSON.")] = False,
    library: LibraryName = None,
) -> None:
    """Hybrid search over the knowledge base."""
    from bunko.domain.metadata import decode_json, parse_filter
    from bunko.errors import ValidationError
    from bunko.services.search import SearchOptions

    try:
        flt = parse_filter(decode_json(filter, "--filter"))
    except ValidationError as exc:
        raise typer.BadParameter(str(exc), param_hint="--filter") from exc
    services = _services(command_settings(data_dir))
    options = SearchOptions(
        limit=limit, min_score=min_score, category=category, method=method, metadata=flt
    )
    workspace = library_workspace(services, library)
    searched = library_label(services, workspace)
    result = services.search.search(workspace, query, options)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
        typer.echo(f"searched library {searched!r}", err=True)  # stdout stays JSON
    else:
        # Which library, always: files uploaded in the web app live in the uploader's own
        # library (or a shared one), not in the drop folder's.
        how = "" if library else " (the drop folder's; --library NAME for another)"
        typer.echo(f"library {searched!r}{how}")
        if not result.items:
            typer.echo(f"no results in library {searched!r}")
        for n, item in enumerate(result.items, start=1):
            snippet = " ".join(item.content.split())[:200]
            typer.echo(
                f"{n}. {item.path}  similarity={item.similarity:.3f} "
                f"(vector {item.vector_score:.3f}, text {item.text_score:.3f})\n   {snippet}"
            )
    services.close()


@app.command()
def reindex(
    data_dir: DataDir = None,
    retrain: Annotated[bool, typer.Option(help="Retrain the LSA embedder first.")] = False,
) -> None:
    """Rebuild the search index from the metadata store."""
    from tqdm import tqdm

    from bunko.bootstrap.background import rebuild_index

    services = _services(command_settings(data_dir))
    started = time.perf_counter()
    with tqdm(total=services.library.count_chunks(), desc="reindex", unit="chunk") as bar:
        count = rebuild_index(services, retrain=retrain, progress=bar.update)
    typer.echo(f"{count} chunks indexed in {time.perf_counter() - started:.1f} s")
    services.close()


@app.command(name="eval")
def evaluate(
    directory: Annotated[Path, typer.Argument(help="A BEIR-format folder.")],
    embedder: Annotated[str | None, typer.Option(help="use | lsa | e5 | none")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
    max_queries: Annotated[
        int | None, typer.Option(help="Use only the first N test queries.")
    ] = None,
    vector_weight: Annotated[
        float | None, typer.Option(help="Weight of the vector score in convex fusion.")
    ] = None,
) -> None:
    """Measure retrieval quality (nDCG@10, Recall@100, MRR@10) and throughput."""
    from bunko.evaluation import format_table, run_evaluation

    report = run_evaluation(
        directory,
        embedder=embedder,
        max_queries=max_queries,
        vector_weight=vector_weight,
        progress=not as_json,
    )
    typer.echo(json.dumps(report, indent=2) if as_json else format_table(report))


@app.command()
def audit(
    library: LibraryName = None,
    since: Annotated[
        str | None,
        typer.Option(help="From this time: an ISO 8601 date or time, or a number of days (7d)."),
    ] = None,
    user: Annotated[
        str | None, typer.Option(help="Only this person's id (and their keys').")
    ] = None,
    action: Annotated[str | None, typer.Option(help="Only this action (e.g. sign_in).")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many events.")] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Print the audit trail, newest first: every library's, or --library's (docs/audit.md).
    With BUNKO_BACKEND=aws it reads the deployment's table."""
    from dataclasses import asdict
    from datetime import datetime, timedelta

    from bunko.domain import utcnow
    from bunko.domain.audit import AuditQuery
    from bunko.services.accounts import LOCAL_PRINCIPAL

    if since and since.endswith("d") and since[:-1].isdigit():
        start: datetime | None = utcnow() - timedelta(days=int(since[:-1]))
    else:
        try:
            start = datetime.fromisoformat(since).astimezone() if since else None
        except ValueError as exc:
            typer.echo(f"error: --since: {since!r} is neither a date nor N days (7d)", err=True)
            raise typer.Exit(2) from exc
    services = _services(command_settings(data_dir, embedder="none"))
    try:
        if services.audit is None:
            typer.echo("error: this backend keeps no audit trail (no accounts)", err=True)
            raise typer.Exit(2)
        workspace = library_workspace(services, library) if library else None
        query = AuditQuery(
            library_id=workspace, user_id=user, action=action, since=start, limit=limit
        )
        page = services.audit.read(LOCAL_PRINCIPAL, query)  # the operator reads it all
    finally:
        services.close()
    for event in page.events:
        if as_json:
            typer.echo(json.dumps({**asdict(event), "at": event.at.isoformat()}))
            continue
        whom = event.user_id or (f"key {event.api_key_id} of {event.key_maker}"
                                 if event.api_key_id else "-")  # fmt: skip
        target = f"{event.object_kind} {event.object_id}" if event.object_id else ""
        typer.echo(
            f"{event.at:%Y-%m-%d %H:%M:%S}  {event.outcome:<7} {event.status}  {event.action}  "
            f"library={event.library_id or '-'}  by={whom}  from={event.client or '-'}  {target}"
        )
    if not as_json:
        typer.echo(f"{len(page.events)} of {page.total} events", err=True)


# Agents: `bunko mcp` (stdio) and `bunko apikey create|list|revoke`.
app.command(name="mcp")(mcp_command)
app.command(name="missing")(missing)  # what a library could not answer
app.add_typer(apikey_app, name="apikey")
# A library moved: `bunko export LIBRARY FILE`, `bunko import FILE` (docs/owners.md).
app.command(name="export")(export_command)
app.command(name="import")(import_command)
app.add_typer(source_app, name="source")  # `bunko source add web --url ...`
app.add_typer(user_app, name="user")  # `bunko user create --admin`


def main() -> None:
    app()


if __name__ == "__main__":
    main()
