"""The host-side app server of ``apps``: API specs, validation, access tokens, pagination and dispatch.

Agent code calls ``apis.<app>.<api>(**kwargs)`` in the confined interpreter; each call arrives here as
``(app, api, args)`` and is answered like an HTTP API: ``{"ok": True, "result": ...}`` or an error with a
status — 401 (no or wrong access token, wrong password), 404 (unknown app, API or resource), 409 (a state
conflict), 422 (validation: missing, unexpected or ill-typed argument, a value out of range). Apps other
than ``supervisor`` and ``api_docs`` need ``login`` first; the token is valid for that app only.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reharness.core.hashing import stable_hash
from reharness.kits.apps.world import World

PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX = 5, 20


class HttpError(Exception):
    """An API error with an HTTP-like status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # "str" | "int" | "float" | "bool" | "list[str]" | "scalar" (a str, int or float)
    description: str
    required: bool = True
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None

    def doc(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "type": self.type,
            "required": self.required,
            "description": self.description,
        }
        if not self.required:
            out["default"] = self.default
        constraints = []
        if self.minimum is not None:
            constraints.append(f"value >= {self.minimum:g}")
        if self.maximum is not None:
            constraints.append(f"value <= {self.maximum:g}")
        if self.choices:
            constraints.append(f"one of {list(self.choices)}")
        out["constraints"] = constraints
        return out


TOKEN = Param("access_token", "str", "Access token from this app's login API.")
PAGE = (
    Param("page_index", "int", "Index of the page to return (0 = first).", False, 0, minimum=0),
    Param(
        "page_limit", "int", "Items per page.", False, PAGE_LIMIT_DEFAULT, minimum=1, maximum=PAGE_LIMIT_MAX
    ),
)


@dataclass(frozen=True)
class ApiSpec:
    app: str
    name: str
    description: str
    handler: Callable[..., Any]
    params: tuple[Param, ...] = ()
    auth: bool = True
    paginated: bool = False
    method: str = "GET"

    @property
    def all_params(self) -> tuple[Param, ...]:
        return ((TOKEN,) if self.auth else ()) + self.params + (PAGE if self.paginated else ())

    def doc(self) -> dict[str, Any]:
        return {
            "app_name": self.app,
            "api_name": self.name,
            "method": self.method,
            "path": f"/{self.app}/{self.name}",
            "description": self.description,
            "parameters": [p.doc() for p in self.all_params],
        }


@dataclass
class Registry:
    """Every app's description and APIs (filled by :mod:`.handlers`)."""

    apps: dict[str, str] = field(default_factory=dict)
    apis: dict[str, dict[str, ApiSpec]] = field(default_factory=dict)

    def add(self, spec: ApiSpec) -> None:
        self.apis.setdefault(spec.app, {})[spec.name] = spec


REGISTRY = Registry()


def _check_type(param: Param, value: Any) -> Any:
    kind = param.type
    if kind == "float" and type(value) is int:
        value = float(value)
    ok = {
        "str": type(value) is str,
        "int": type(value) is int,
        "float": type(value) is float,
        "bool": type(value) is bool,
        "list[str]": type(value) is list and all(type(v) is str for v in value),
        "scalar": type(value) in (str, int, float),
    }[kind]
    if not ok:
        raise HttpError(422, f"parameter {param.name!r} must be of type {kind}, got {type(value).__name__}")
    if param.minimum is not None and value < param.minimum:
        raise HttpError(422, f"parameter {param.name!r} must be >= {param.minimum:g}, got {value!r}")
    if param.maximum is not None and value > param.maximum:
        raise HttpError(422, f"parameter {param.name!r} must be <= {param.maximum:g}, got {value!r}")
    if param.choices and value not in param.choices:
        raise HttpError(422, f"parameter {param.name!r} must be one of {list(param.choices)}, got {value!r}")
    return value


class AppServer:
    """Serves one episode's API calls against its :class:`World`."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.tokens: dict[str, tuple[str, int]] = {}
        self.completion: dict[str, Any] | None = None
        self.log: list[tuple[str, str, int]] = []

    # ------------------------------------------------------------------ entry point
    def handle(self, app: str, api: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            result = self._dispatch(app, api, args)
        except HttpError as exc:
            self.log.append((app, api, exc.status))
            return {"ok": False, "status": exc.status, "message": exc.message}
        self.log.append((app, api, 200))
        return {"ok": True, "result": result}

    def _dispatch(self, app: str, api: str, args: dict[str, Any]) -> Any:
        apis = REGISTRY.apis.get(app)
        if apis is None:
            close = difflib.get_close_matches(app, list(REGISTRY.apis), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise HttpError(404, f"No app named {app!r}.{hint} See apis.api_docs.show_app_descriptions().")
        spec = apis.get(api)
        if spec is None:
            close = difflib.get_close_matches(api, list(apis), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise HttpError(
                404,
                f"No API named {api!r} in app {app!r}.{hint} See "
                f"apis.api_docs.show_api_descriptions(app_name={app!r}).",
            )
        values = self._validate(spec, args)
        user = self._authenticate(spec, values.pop("access_token", None)) if spec.auth else None
        page = (values.pop("page_index"), values.pop("page_limit")) if spec.paginated else None
        result = spec.handler(self, user, **values)
        if page is not None:
            index, limit = page
            result = list(result)[index * limit : (index + 1) * limit]
        return result

    def _validate(self, spec: ApiSpec, args: dict[str, Any]) -> dict[str, Any]:
        params = {p.name: p for p in spec.all_params}
        unexpected = sorted(set(args) - set(params))
        if unexpected:
            raise HttpError(
                422,
                f"unexpected parameter(s) {unexpected} for {spec.app}.{spec.name}; its parameters are "
                f"{list(params)}",
            )
        values: dict[str, Any] = {}
        for name, param in params.items():
            if name not in args or args[name] is None:
                if param.required:
                    if name == "access_token":
                        raise HttpError(
                            401,
                            f"Not authenticated: {spec.app}.{spec.name} needs access_token (get one from "
                            f"apis.{spec.app}.login(username=..., password=...)).",
                        )
                    raise HttpError(422, f"missing required parameter {name!r} for {spec.app}.{spec.name}")
                values[name] = param.default
                continue
            values[name] = _check_type(param, args[name])
        return values

    def _authenticate(self, spec: ApiSpec, token: str) -> int:
        owner = self.tokens.get(token)
        if owner is None:
            raise HttpError(401, "Invalid access token: log in again with this app's login API.")
        if owner[0] != spec.app:
            raise HttpError(401, f"This access token is for the {owner[0]} app, not for {spec.app}.")
        return owner[1]

    # ------------------------------------------------------------------ auth
    def login(self, app: str, username: str, password: str) -> dict[str, Any]:
        rows = self.world.rows(
            "SELECT a.user_id FROM accounts a JOIN users u ON u.id = a.user_id "
            "WHERE u.email = ? AND a.app = ? "
            "AND a.password = ?",
            (username, app, password),
        )
        if not rows:
            raise HttpError(401, f"Invalid credentials for {app}: check the username (email) and password.")
        token = stable_hash({"app": app, "user": rows[0]["user_id"], "n": len(self.tokens)}, length=32)
        self.tokens[token] = (app, int(rows[0]["user_id"]))
        return {"access_token": token, "token_type": "Bearer"}
