"""The viewer's web application: Starlette routes rendering Jinja2 templates (autoescape on for
every template: transcripts are attacker-controlled text), behind `Guard`.

Every response forbids script altogether (the pages have none) and framing, and sends no
Referer; the stylesheet is the only resource, served from the same origin behind the same token.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, urlencode

import jinja2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from precompact import api
from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.viewer import pages

HERE = Path(__file__).parent
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]
FACTS_SHOWN = 200  # of each kind on a savepoint's page: a long session can drop tens of thousands
REFRESH_SECONDS = 2  # a savepoint's page asks again this often while its dropped list is made
_SAFE_NAME = re.compile(r"[^\w.-]+")


class Guard:
    """Lets through only a GET for a path under the token, addressed to this server by its
    loopback name (a foreign Host is a DNS-rebinding page), and, when the browser says where
    the request comes from, from this server's own origin; adds the security headers to every
    answer, refusals included."""

    def __init__(self, app: ASGIApp, token: str, port: int, admitted: Callable[[], None] | None = None):
        self._app = app
        self._token = token
        self._admitted = admitted
        self._hosts = {f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()}
        self._origins = {b"http://" + host for host in self._hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self._app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        refusal = self._refusal(scope)
        if refusal is not None:
            await PlainTextResponse(refusal[1], status_code=refusal[0])(scope, receive, secured)
            return
        if self._admitted is not None:
            self._admitted()
        await self._app(scope, receive, secured)

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers: dict[bytes, list[bytes]] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name.lower(), []).append(value)
        if scope["method"] != "GET":
            return 405, "read-only: only GET"
        hosts = headers.get(b"host", [])
        if len(hosts) != 1 or hosts[0] not in self._hosts:
            return 403, "foreign Host"
        if any(origin not in self._origins for origin in headers.get(b"origin", [])):
            return 403, "foreign Origin"
        given = scope["path"].split("/", 2)[1] if scope["path"].startswith("/") else ""
        if not hmac.compare_digest(given.encode(), self._token.encode()):
            return 404, "not found"
        return None


def create(
    config: Config,
    token: str,
    port: int,
    verdicts: pages.Verdicts | None = None,
    admitted: Callable[[], None] | None = None,
) -> ASGIApp:
    """The guarded application for `config`'s project; `admitted` is called at each request the
    guard lets through."""
    viewer = Viewer(config, f"/{token}", verdicts or pages.Verdicts(config))
    routes = [
        Route("/", viewer.answering(viewer.timeline)),
        Route("/savepoint", viewer.answering(viewer.savepoint)),
        Route("/conversation", viewer.answering(viewer.conversation)),
        Route("/entry", viewer.answering(viewer.entry)),
        Route("/search", viewer.answering(viewer.search)),
        Route("/diff", viewer.answering(viewer.diff)),
        Route("/export", viewer.answering(viewer.export)),
        Mount("/static", StaticFiles(directory=HERE / "static")),
    ]
    return Guard(Starlette(routes=[Mount(viewer.base, routes=routes)]), token, port, admitted)


def create_home(token: str, port: int, admitted: Callable[[], None] | None = None) -> ASGIApp:
    """The guarded home page of this machine's projects (outside a project, or `view
    --everywhere`): the projects the registry lists and one search over all of them."""
    home = Home(f"/{token}")
    routes = [
        Route("/", home.answering(home.projects)),
        Route("/search", home.answering(home.search)),
        Mount("/static", StaticFiles(directory=HERE / "static")),
    ]
    return Guard(Starlette(routes=[Mount(home.base, routes=routes)]), token, port, admitted)


class Home:
    """The machine's page: every registered project, and recall across them. A hit names its
    project and the command that shows it whole; each project's own pages are its own `precompact
    view`."""

    def __init__(self, base: str):
        self.base = base
        self._templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True, undefined=jinja2.StrictUndefined
        )
        self._templates.globals.update(base=base)

    def answering(self, page: Callable[[Request], Response]) -> Callable[[Request], Response]:
        def answer(request: Request) -> Response:
            try:
                return page(request)
            except PrecompactError as e:
                html = self._templates.get_template("home.html").render(
                    projects=[], query="", results=None, error=str(e)
                )
                return Response(html, status_code=404, media_type="text/html; charset=utf-8")

        return answer

    def _render(self, **values: object) -> Response:
        html = self._templates.get_template("home.html").render(error=None, **values)
        return Response(html, media_type="text/html; charset=utf-8")

    def projects(self, request: Request) -> Response:
        return self._render(projects=api.projects(), query="", results=None)

    def search(self, request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        results = api.recall_everywhere(query).results if query else None
        return self._render(projects=api.projects(), query=query, results=results)


def _number(request: Request, name: str) -> int:
    value = request.query_params.get(name, "")
    # ASCII digits only (`²` is a digit to str.isdigit, not to int), and no more than 1 << 63 has:
    # int() refuses a string of over 4,300 digits with a ValueError, which would be a 500.
    if not re.fullmatch("[0-9]{1,19}", value) or not 0 < int(value) < 1 << 63:
        raise pages.ViewerError(f"{name} must be a savepoint or entry number")
    return int(value)


def _page_asked(request: Request) -> int:
    if request.query_params.get("at"):
        return pages.page_of(_number(request, "at"))
    if request.query_params.get("page") == "last":
        return pages.LAST_PAGE
    return _number(request, "page") if "page" in request.query_params else 1


class Viewer:
    """The pages of one project: each route a method; what they remember (the verifier's
    report, the lists of what compaction dropped, where each history's entries lie) lives as
    long as the server."""

    def __init__(self, config: Config, base: str, checked: pages.Verdicts):
        self._config = config
        self.base = base
        self._checked = checked
        self._dropped = pages.DroppedLists()
        self._histories = pages.Histories()
        self._templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self._templates.globals.update(link=self.link, base=base, page_of=pages.page_of)

    def link(self, path: str, **query: object) -> str:
        given = {k: v for k, v in query.items() if v is not None}
        return f"{self.base}{path}" + (f"?{urlencode(given)}" if given else "")

    def _render(self, name: str, status: int = 200, **values: object) -> Response:
        html = self._templates.get_template(name).render(**values)
        return Response(html, status_code=status, media_type="text/html; charset=utf-8")

    def _instance(self, request: Request) -> str:
        return request.query_params.get("instance") or self._config.instance

    def answering(self, page: Callable[[Request], Response]) -> Callable[[Request], Response]:
        """`page` as a route: a user-caused error becomes a page saying it."""

        def answer(request: Request) -> Response:
            try:
                return page(request)
            except PrecompactError as e:
                return self._render("error.html", 404, message=str(e))

        return answer

    def timeline(self, request: Request) -> Response:
        sessions, bad_lines = pages.timeline(self._config)
        checked = self._checked.current()
        return self._render(
            "timeline.html",
            sessions=sessions,
            bad_lines=bad_lines,
            checked=checked,
            reported=pages.reported,
            stand_seconds=pages.VERDICTS_STAND_SECONDS,
            instance=self._config.instance,
        )

    def savepoint(self, request: Request) -> Response:
        asked = (self._instance(request), _number(request, "sequence"))
        shown = pages.savepoint_page(self._config, *asked, self._dropped)
        return self._render(
            "savepoint.html",
            page=shown,
            verdicts=pages.on_its_page(self._checked, self._checked.current(), shown),
            facts_shown=FACTS_SHOWN,
            refresh_seconds=REFRESH_SECONDS,
        )

    def conversation(self, request: Request) -> Response:
        asked = (self._instance(request), _number(request, "sequence"))
        shown = pages.conversation_page(self._config, self._histories, *asked, _page_asked(request))
        return self._render("conversation.html", page=shown)

    def entry(self, request: Request) -> Response:
        asked = (self._instance(request), _number(request, "sequence"), _number(request, "position"))
        return self._render("entry.html", page=pages.entry_page(self._config, self._histories, *asked))

    def search(self, request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        results = pages.search(self._config, query) if query else None
        return self._render("search.html", query=query, results=results)

    def diff(self, request: Request) -> Response:
        instance = self._instance(request)
        choices = api.savepoints(self._config, instance)
        if "a" not in request.query_params:
            return self._render("diff.html", instance=instance, choices=choices, diff=None)
        found = pages.diff(self._config, instance, _number(request, "a"), _number(request, "b"))
        return self._render("diff.html", instance=instance, choices=choices, diff=found)

    def export(self, request: Request) -> Response:
        instance, sequence = self._instance(request), _number(request, "sequence")
        data = pages.export(self._config, instance, sequence)
        name = _SAFE_NAME.sub("_", f"{instance}-savepoint-{sequence}.json")
        disposition = f"attachment; filename=\"{name}\"; filename*=UTF-8''{quote(name)}"
        return Response(data, media_type="application/json", headers={"content-disposition": disposition})
