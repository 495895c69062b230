"""Helpers for REST tests: JSON calls through pytest-jupyter's jp_fetch, checked against OpenAPI."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from tornado.httpclient import HTTPClientError

import jupyter_recall.server

OPENAPI_PATH = Path(jupyter_recall.server.__file__).parent / "openapi.yaml"


@cache
def openapi() -> dict[str, Any]:
    return yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))


def _spec_path(path: str) -> str:
    """Map a concrete URL path to its OpenAPI template."""
    for template in openapi()["paths"]:
        pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
        if re.match(pattern, path):
            return str(template)
    raise AssertionError(f"{path} is not in openapi.yaml")


def check_response(method: str, path: str, status: int, body: Any) -> None:
    """Assert that the status is documented for this route and the body matches its schema."""
    spec = openapi()
    operation = spec["paths"][_spec_path(path)][method.lower()]
    assert str(status) in operation["responses"], f"{method} {path} -> {status} is undocumented"
    response = operation["responses"][str(status)]
    if "$ref" in response:
        response = spec["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    schema = response.get("content", {}).get("application/json", {}).get("schema")
    if schema is None:
        return
    resolver_doc = {"components": spec["components"], **schema}
    jsonschema.validate(body, resolver_doc)


async def call(
    jp_fetch: Any, method: str, path: str, body: Any = None, *, expect: int = 200, **params: str
) -> Any:
    """Call the API and return the decoded JSON (None for 204), checking status and schema."""
    kwargs: dict[str, Any] = {"method": method, "raise_error": False}
    if body is not None:
        kwargs["body"] = json.dumps(body)
    elif method in ("POST", "PATCH"):
        kwargs["body"] = "{}"
    if params:
        kwargs["params"] = params
    response = await jp_fetch(*path.strip("/").split("/"), **kwargs)
    text = response.body.decode() if response.body else ""
    assert response.code == expect, f"{method} {path}: {response.code} {text}"
    document = json.loads(text) if text else None
    check_response(method, "/" + path.strip("/"), response.code, document)
    return document


__all__ = ["HTTPClientError", "call", "check_response", "openapi"]
