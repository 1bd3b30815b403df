"""The REST door's audit seam (docs/audit.md): one event for each request that changes
something or is refused, recorded after its answer.

A request is recorded when its method writes (anything but GET, HEAD, OPTIONS) and its route
is not marked read-only (`http.deps.ReadsOnly`), or when it is refused (401, 403, 404) on any
route. Requests no route serves are not recorded (a scanner's 404s), nor MCP's own requests,
whose tools record themselves (bunko.mcp.tool_server), unless refused before reaching a tool.
The action is the route's template (`DELETE /knowledge-bases/{file_id}`); its last path
parameter is the object. Nothing of the body, the query or the headers is kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bunko.domain.audit import REFUSED_STATUSES, outcome_of
from bunko.services.accounts import AuditTrail, RequestNote

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MCP_PATH = "/mcp"


@dataclass(frozen=True)
class RouteShape:
    """A route's template and the pattern that matches its paths."""

    template: str
    methods: frozenset[str]
    pattern: re.Pattern[str]

    @classmethod
    def of(cls, template: str, methods: Iterable[str] | None) -> RouteShape:
        regex = re.sub(
            r"\\\{(\w+)(?::path)?\\\}",
            lambda m: f"(?P<{m.group(1)}>[^/]+)",
            re.escape(template),
        )
        return cls(template, frozenset(methods or ()), re.compile(f"^{regex}$"))


def route_path(scope: Scope) -> str:
    """The path the app's routes see: without the root path (API Gateway's stage, `/v1`)."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def object_of(template: str, params: dict[str, str]) -> tuple[str | None, str | None]:
    """(kind, id) of the route's last path parameter: `{file_id}` → ("file", the id)."""
    if not params:
        return None, None
    name = list(params)[-1]
    if name in ("id", "path"):
        before = template.split("{" + name)[0].rstrip("/").rsplit("/", 1)[-1]
        return before.rstrip("s") or None, params[name]
    return name.removesuffix("_id"), params[name]


class AuditRequests:
    """ASGI middleware: opens the request's note, and records its event after the answer.
    `routes` gives the app's (template, methods) pairs; read on first use, once the app has
    all its routers."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        trail: AuditTrail,
        routes: Callable[[], Iterable[tuple[str, Iterable[str] | None]]],
    ) -> None:
        self.app = app
        self.trail = trail
        self._routes = routes
        self._shapes: list[RouteShape] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        note = RequestNote(client=client[0] if client else None)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and not note.recorded:
                # kept before the answer leaves: no client sees a change the trail lacks
                await self._record(scope, note, message["status"])
            await send(message)

        with self.trail.open(note):
            try:
                await self.app(scope, receive, sending)
            finally:
                if not note.recorded:  # no answer started: the app failed
                    await self._record(scope, note, 500)

    async def _record(self, scope: Scope, note: RequestNote, status: int) -> None:
        note.recorded = True  # one request, one event (or none)
        method, path = scope["method"], route_path(scope)
        refused = status in REFUSED_STATUSES
        if path == MCP_PATH or path.startswith(MCP_PATH + "/"):
            if status in (401, 403):
                await self._keep(note, f"{method} {MCP_PATH}", status, None, None)
            return
        if not refused and (method in READ_METHODS or note.reads_only):
            return
        found = self._match(method, path)
        if found is None:
            return  # no route serves it: nothing was there to change or refuse
        template, params = found
        kind, object_id = object_of(template, params)
        library = params.get("library_id")  # a route on a library: the event is that library's
        await self._keep(note, f"{method} {template}", status, kind, object_id, library)

    async def _keep(
        self,
        note: RequestNote,
        action: str,
        status: int,
        kind: str | None,
        object_id: str | None,
        library: str | None = None,
    ) -> None:
        def record() -> None:
            self.trail.record_request(
                note,
                action=action,
                status=status,
                outcome=outcome_of(status),
                object_kind=kind,
                object_id=object_id,
                library_id=library,
            )

        # off the event loop: a store's write may wait for SQLite's lock or DynamoDB
        await anyio.to_thread.run_sync(record)

    def _match(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        if self._shapes is None:
            self._shapes = [RouteShape.of(t, m) for t, m in self._routes() if t]
        for shape in self._shapes:
            if shape.methods and method not in shape.methods:
                continue
            matched = shape.pattern.match(path)
            if matched:
                return shape.template, matched.groupdict()
        return None
