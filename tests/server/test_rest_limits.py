"""The REST boundary is total: every bad input is a 4xx naming where it is, never a 5xx.

Against a real Jupyter server (pytest-jupyter's ``jp_fetch``); the classes of input here are
the ones a fuzzer found answered with 500 before bodies were decoded in one place.
"""

from __future__ import annotations

import json
import re

import pytest

from jupyter_recall.core.limits import (
    FLAGS,
    ID_PATTERN,
    MAX_BODY_BYTES,
    MAX_DEPTH,
    MAX_INTEGER_DIGITS,
    MAX_KEEP_RUNS,
    MAX_PAUSE_AFTER_FAILURES,
    MAX_RETRIES,
    MAX_RETRY_FACTOR,
    MAX_RUNS,
    MAX_SECONDS,
    SCHEDULE_KINDS,
    TEXT_LIMITS,
)
from jupyter_recall.core.model import JobKind, JobStatus, RunStatus
from jupyter_recall.core.retries import RETRY_FIELDS, RETRY_ON
from jupyter_recall.engine.owners import OWNER_PATTERN
from jupyter_recall.server.handlers import route_table
from tests.server.rest import call, openapi

NOTIFY = {"type": "notification", "message": "hello"}
RECALL = {
    "when": "in 1h",
    "kind": "recall",
    "action": {"type": "instruction", "instruction": "look at the logs"},
}


async def raw(jp_fetch, method, path, body: bytes | str | None = None, **kwargs):
    """Send ``body`` as it is (not JSON-encoded); return (status, decoded JSON or None, headers)."""
    response = await jp_fetch(
        *path.strip("/").split("/"), method=method, body=body, raise_error=False, **kwargs
    )
    text = response.body.decode() if response.body else ""
    return response.code, (json.loads(text) if text else None), response.headers


def write_routes(job_id: str) -> list[tuple[str, str]]:
    """Every documented route that takes a body, with ids filled in."""
    routes = []
    for template, item in openapi()["paths"].items():
        for method in item:
            if method in ("post", "put", "patch"):
                path = template.replace("{job_id}", job_id).replace("{plugin_owner}", "acme")
                routes.append((method.upper(), path))
    return [(m, p) for m, p in routes if "{" not in p]


BAD_BODIES = [
    pytest.param(b'{"when": "in 1h", "name": "caf\xe9"}', "not UTF-8", id="latin-1"),
    pytest.param(b"[" * 1000 + b"]" * 1000, "nested too deeply", id="1000-deep"),
    pytest.param(b'{"a": ' + b"[" * 200 + b"]" * 200 + b"}", "nested too deeply", id="200-deep"),
    pytest.param(b'{"when": ' + b"9" * 5000 + b"}", "digits", id="5000-digit-int"),
    pytest.param(b'{"when": NaN}', "finite", id="NaN"),
    pytest.param(b'{"when": -Infinity}', "finite", id="-Infinity"),
    pytest.param(b'{"when": 1e999}', "finite", id="1e999"),
    pytest.param(b'{"when": "\\ud800"}', "surrogate", id="lone-surrogate"),
    pytest.param(b'["a list"]', "JSON object", id="array"),
    pytest.param(b"{not json", "not valid JSON", id="not-json"),
]


@pytest.mark.parametrize(("body", "says"), BAD_BODIES)
async def test_every_write_route_refuses_a_bad_body_with_400(jp_fetch, body, says):
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "every 1h", "action": NOTIFY}, expect=201
    )
    routes = write_routes(job["id"])
    assert len(routes) >= 14, routes
    for method, path in routes:
        status, error, _ = await raw(jp_fetch, method, path, body)
        assert status == 400, f"{method} {path} answered {status}: {error}"
        assert says in error["message"], (method, path, error)
        assert isinstance(error["field"], str), error
    # None of them did anything.
    assert (await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}"))["status"] == "active"


async def test_the_field_of_a_deep_value_is_its_path(jp_fetch):
    status, error, _ = await raw(jp_fetch, "POST", "api/recall/jobs", '{"when": "\\udfff"}')
    assert (status, error["field"]) == (400, "when")
    nested = {"when": "in 1h", "action": {**NOTIFY, "params": {"a": [{"b": "\udc00"}]}}}
    body = json.dumps(nested)  # ensure_ascii writes the surrogate as an escape
    status, error, _ = await raw(jp_fetch, "POST", "api/recall/jobs", body)
    assert (status, error["field"]) == (400, "action.params.a[0].b")


async def test_a_body_over_the_size_limit_is_400_naming_the_limit(jp_fetch):
    body = json.dumps({"when": "in 1h", "action": {**NOTIFY, "message": "x" * MAX_BODY_BYTES}})
    status, error, _ = await raw(jp_fetch, "POST", "api/recall/jobs", body)
    assert (status, error["field"]) == (400, "body")
    assert f"{MAX_BODY_BYTES:,}" in error["message"]


async def test_depth_up_to_the_limit_is_accepted(jp_fetch):
    params: object = "leaf"
    for _ in range(MAX_DEPTH - 2):  # objects: body > action > params (the first of these)
        params = {"k": params}
    # A user tool of a notebook's kernel: its params are the kernel's to check, not the server's.
    action = {"type": "tool", "name": "m.a", "params": params}
    body = {"when": "in 1h", "action": action, "target": {"type": "kernel", "path": "d.ipynb"}}
    await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    body["action"]["params"] = {"k": params}
    error = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=400)
    assert error["field"].startswith("action.params.k.k")
    assert str(MAX_DEPTH) in error["message"]


@pytest.mark.parametrize("item", [None, True, 1, [], "job"])
async def test_a_non_object_in_a_batch_is_400_naming_its_index(jp_fetch, item):
    body = {"jobs": [{"when": "in 1h", "action": NOTIFY}, item]}
    error = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=400)
    assert error["field"] == "jobs[1]"
    assert "job object" in error["message"]
    assert (await call(jp_fetch, "GET", "api/recall/jobs"))["jobs"] == [], "all or nothing"


@pytest.mark.parametrize(
    ("jobs", "field"),
    [
        ([{"when": "in 1h", "action": NOTIFY}, {"action": NOTIFY}], "jobs[1].when"),
        ([{"when": "in 1h", "action": {"type": "sql"}}], "jobs[0].action.type"),
        (
            [{"when": "in 1h", "action": NOTIFY, "policies": {"jitter": -1}}],
            "jobs[0].policies.jitter",
        ),
        ([], "jobs"),
    ],
)
async def test_batch_errors_name_the_path(jp_fetch, jobs, field):
    error = await call(jp_fetch, "POST", "api/recall/jobs", {"jobs": jobs}, expect=400)
    assert error["field"] == field, error


@pytest.mark.parametrize(
    ("policies", "field", "limit"),
    [
        ({"max_runs": 10**30}, "policies.max_runs", f"{MAX_RUNS:,}"),
        ({"max_runs": 0}, "policies.max_runs", f"{MAX_RUNS:,}"),
        ({"jitter": 1e300}, "policies.jitter", f"{MAX_SECONDS:,}"),
        ({"jitter": -1}, "policies.jitter", f"{MAX_SECONDS:,}"),
        ({"catchup_window": 10**20}, "policies.catchup_window", f"{MAX_SECONDS:,}"),
        ({"timeout": 10**20}, "policies.timeout", f"{MAX_SECONDS:,}"),
        ({"timeout": 0}, "policies.timeout", "above 0"),
        ({"overlap": "queue"}, "policies.overlap", "buffer_one"),
        ({"colour": "red"}, "policies.colour", "jitter"),
        ({"retries": MAX_RETRIES + 1}, "policies.retries.max", f"{MAX_RETRIES}"),
        ({"retries": {"max": 1, "backoff": 1e300}}, "policies.retries.backoff", f"{MAX_SECONDS:,}"),
        ({"retries": {"max": 1, "factor": 11}}, "policies.retries.factor", f"{MAX_RETRY_FACTOR}"),
        ({"retries": {"max": 1, "on": ["missed"]}}, "policies.retries.on", "timed_out"),
        ({"retries": {"backoff": 5}}, "policies.retries.max", "required"),
        ({"pause_after_failures": 0}, "policies.pause_after_failures", "1,000"),
        ({"pause_after_failures": "2"}, "policies.pause_after_failures", "integer"),
        ({"keep_runs": MAX_KEEP_RUNS + 1}, "policies.keep_runs", f"{MAX_KEEP_RUNS:,}"),
        ({"keep_runs_for": "2 months"}, "policies.keep_runs_for", "7d"),
        ({"keep_runs_for": 0}, "policies.keep_runs_for", f"{MAX_SECONDS:,}"),
    ],
)
async def test_policies_out_of_range_are_400_naming_field_and_limit(
    jp_fetch, policies, field, limit
):
    body = {"when": "every 1h", "action": NOTIFY, "policies": policies}
    error = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=400)
    assert error["field"] == field, error
    assert limit in error["message"] + " ".join(error.get("accepted", []))
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "every 1h", "action": NOTIFY}, expect=201
    )
    patched = await call(
        jp_fetch, "PATCH", f"api/recall/jobs/{job['id']}", {"policies": policies}, expect=400
    )
    assert patched["field"] == field


async def test_the_largest_accepted_policies_are_kept(jp_fetch):
    policies = {"max_runs": MAX_RUNS, "jitter": MAX_SECONDS, "catchup_window": MAX_SECONDS}
    body = {"when": "every 1h", "action": NOTIFY, "policies": policies}
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert {k: job["policies"][k] for k in policies} == policies


@pytest.mark.parametrize(("field", "limit"), sorted(TEXT_LIMITS.items()))
async def test_short_text_fields_refuse_overlong_values_and_nul(jp_fetch, field, limit):
    base = {"when": "in 1h", "action": NOTIFY}
    too_long = {**base, field: "x" * (limit + 1)}
    error = await call(jp_fetch, "POST", "api/recall/jobs", too_long, expect=400)
    assert error["field"] == field
    assert f"at most {limit:,}" in error["message"]
    with_nul = {**base, field: "in 1h\x00" if field == "when" else "a\x00b"}
    error = await call(jp_fetch, "POST", "api/recall/jobs", with_nul, expect=400)
    assert (error["field"], "NUL" in error["message"]) == (field, True)


async def test_a_five_megabyte_name_is_refused_and_a_long_one_kept(jp_fetch):
    base = {"when": "in 1h", "action": NOTIFY}
    error = await call(
        jp_fetch, "POST", "api/recall/jobs", {**base, "name": "n" * 5_000_000}, expect=400
    )
    assert error["field"] == "name"
    assert f"{TEXT_LIMITS['name']:,}" in error["message"]
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {**base, "name": "é" * TEXT_LIMITS["name"]}, expect=201
    )
    error = await call(
        jp_fetch, "PATCH", f"api/recall/jobs/{job['id']}", {"name": "n" * 5000}, expect=400
    )
    assert error["field"] == "name"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": "n" * (TEXT_LIMITS["name"] + 1)}, "jobs[0].name"),
        ({"tz": "UTC\x00"}, "jobs[0].tz"),
        ({"when": "w" * (TEXT_LIMITS["when"] + 1)}, "jobs[0].when"),
        ({"policies": {"max_runs": 10**30}}, "jobs[0].policies.max_runs"),
        ({"policies": {"jitter": -1}}, "jobs[0].policies.jitter"),
        ({"name": "nightly \u202egnp.exe"}, "jobs[0].name"),
        ({"target": {"type": "headless", "cwd": "a\x00b"}}, "jobs[0].target.cwd"),
    ],
)
async def test_owners_declarations_have_the_same_limits(jp_fetch, change, field):
    spec = {"key": "nightly", "when": "every day at 03:00", "action": NOTIFY, **change}
    error = await call(jp_fetch, "PUT", "api/recall/owners/acme/jobs", {"jobs": [spec]}, expect=400)
    assert error["field"] == field


HEADLESS_CODE = {"action": {"type": "code", "code": "1"}, "target": {"type": "headless"}}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"target": {"type": "kernel", "path": "a\x00b"}}, "target.path"),
        ({"target": {"type": "kernel", "path": "a\x00b.ipynb"}}, "target.path"),
        ({"target": {"type": "headless", "cwd": "sub\x00"}}, "target.cwd"),
        ({"action": {"type": "notebook", "path": "a\x00.ipynb"}}, "action.path"),
    ],
)
async def test_a_path_no_file_can_have_is_refused_at_creation_and_change(jp_fetch, change, field):
    # A NUL in a path was accepted and failed at every run.
    body = {"when": "in 1h", **HEADLESS_CODE, **change}
    error = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=400)
    assert (error["field"], error["message"]) == (
        field,
        f"{field}: must not contain a NUL character: give text without it",
    )
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "in 1h", **HEADLESS_CODE}, expect=201
    )
    patched = await call(jp_fetch, "PATCH", f"api/recall/jobs/{job['id']}", change, expect=400)
    assert patched["field"] == field


@pytest.mark.parametrize(
    "control", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2069"]
)
async def test_a_name_with_a_bidi_control_is_refused_naming_name(jp_fetch, control):
    # It showed the rest of a %jobs or CLI table's line backwards.
    body = {"when": "in 1h", "action": NOTIFY, "name": f"report{control}fdp.exe"}
    error = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=400)
    assert error["field"] == "name"
    assert f"must not contain the bidirectional control U+{ord(control):04X}" in error["message"]
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "in 1h", "action": NOTIFY}, expect=201
    )
    patched = await call(
        jp_fetch, "PATCH", f"api/recall/jobs/{job['id']}", {"name": f"x{control}"}, expect=400
    )
    assert patched["field"] == "name"
    # Elsewhere than in a name (a notification's text), such a character is text as any other.
    kept = {"when": "in 1h", "action": {**NOTIFY, "title": f"a{control}b"}, "name": "kept"}
    assert (await call(jp_fetch, "POST", "api/recall/jobs", kept, expect=201))["name"] == "kept"


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("\x07", "code"),
        ("\x01\n\x07", "code"),
        ("\x01\nprint('a\\tb')", "print('a\\tb')"),
        ("x\t=\x1b[31m 1\u202e2\r\nrest", "x =[31m 12"),
        ("\u2066  \n  total()", "total()"),
    ],
)
async def test_a_default_name_leaves_control_and_bidi_characters_out(jp_fetch, code, name):
    # A default name is the code's first line, without its control and bidi characters.
    body = {"when": "in 1h", **HEADLESS_CODE, "action": {"type": "code", "code": code}}
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert job["name"] == name
    message = {"when": "in 1h", "action": {**NOTIFY, "message": "\u202eevil\x1b"}}
    assert (await call(jp_fetch, "POST", "api/recall/jobs", message, expect=201))["name"] == "evil"


async def test_parse_bounds_its_text_too(jp_fetch):
    error = await call(jp_fetch, "POST", "api/recall/parse", {"when": "x" * 10_000}, expect=400)
    assert error["field"] == "when"
    error = await call(
        jp_fetch, "POST", "api/recall/parse", {"when": "in 1h", "tz": "\x00"}, expect=400
    )
    assert error["field"] == "tz"


async def test_query_enums_are_checked(jp_fetch):
    error = await call(jp_fetch, "GET", "api/recall/jobs", schedule_kind="AAA", expect=400)
    assert error["field"] == "schedule_kind"
    assert error["accepted"] == list(SCHEDULE_KINDS)
    error = await call(jp_fetch, "GET", "api/recall/jobs", pending_recalls="maybe", expect=400)
    assert (error["field"], error["accepted"]) == ("pending_recalls", list(FLAGS))
    for flag in FLAGS:
        await call(jp_fetch, "GET", "api/recall/jobs", pending_recalls=flag)


async def test_pending_recalls_false_lists_everything(jp_fetch):
    await call(jp_fetch, "POST", "api/recall/jobs", {"when": "in 1h", "action": NOTIFY}, expect=201)
    recall = {**RECALL, "target": {"type": "kernel", "path": "a.ipynb"}}
    await call(jp_fetch, "POST", "api/recall/jobs", recall, expect=201)
    for flag, count in (("0", 2), ("false", 2), ("1", 1), ("true", 1)):
        listed = await call(jp_fetch, "GET", "api/recall/jobs", pending_recalls=flag)
        assert len(listed["jobs"]) == count, flag


@pytest.mark.parametrize("priority", ["urgent", "", None, False, 0, [], "HIGH"])
async def test_notification_priority_outside_the_spec_is_400(jp_fetch, priority):
    body = {"message": "hi", "channel": "ui", "priority": priority}
    error = await call(jp_fetch, "POST", "api/recall/notifications", body, expect=400)
    assert error["field"] == "priority"
    assert error["accepted"] == ["low", "normal", "high", "critical"]


async def test_notification_priority_defaults_to_normal(jp_fetch):
    body = {"message": "hi", "channel": "ui"}
    sent = await call(jp_fetch, "POST", "api/recall/notifications", body, expect=201)
    assert sent["notification"]["priority"] == "normal"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "api/recall/nope"),
        ("POST", "api/recall/jobs/abc/explode"),
        ("DELETE", "api/recall/runs/abc/stop/now"),
        ("GET", "api/recall/jobs/" + "a" * 65),
        ("GET", "api/recall/jobs/a.b"),
        ("PUT", "api/recall/owners/-acme/jobs"),
    ],
)
async def test_unknown_paths_are_a_json_404(jp_fetch, method, path):
    body = b"{}" if method in ("POST", "PUT") else None
    status, error, _ = await raw(jp_fetch, method, path, body)
    assert status == 404
    assert error["reason"] == "NotFoundError"
    assert "not found" in error["message"]


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "api/recall/jobs", "GET, POST"),
        ("DELETE", "api/recall/runs", "GET"),
        ("POST", "api/recall/info", "GET"),
        ("GET", "api/recall/parse", "POST"),
        ("PATCH", "api/recall/owners/acme/jobs", "GET, PUT, DELETE"),
    ],
)
async def test_405_carries_an_allow_header(jp_fetch, method, path, allow):
    body = b"{}" if method in ("POST", "PUT", "PATCH") else None
    status, error, headers = await raw(jp_fetch, method, path, body)
    assert status == 405
    assert headers["Allow"] == allow
    assert error["message"]


def test_every_route_allows_the_methods_it_documents():
    from jupyter_recall.server.handlers import UnknownRouteHandler, allowed_methods

    spec = openapi()["paths"]
    for pattern, handler in route_table():
        if handler is UnknownRouteHandler:
            continue
        template = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", pattern).replace("{action}", "pause")
        documented = [
            m.upper() for m in spec[template] if m in ("get", "post", "put", "patch", "delete")
        ]
        assert sorted(allowed_methods(handler)) == sorted(documented), template


async def test_patch_cannot_move_a_recall_to_a_session_with_one(jp_fetch):
    first = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        {**RECALL, "target": {"type": "kernel", "path": "one.ipynb"}},
        expect=201,
    )
    second = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        {**RECALL, "target": {"type": "kernel", "path": "two.ipynb"}},
        expect=201,
    )
    error = await call(
        jp_fetch,
        "PATCH",
        f"api/recall/jobs/{second['id']}",
        {"target": {"type": "kernel", "path": "one.ipynb"}},
        expect=409,
    )
    assert first["id"] in error["message"]
    pending = await jp_fetch(
        "api", "recall", "jobs", params={"path": "one.ipynb", "pending_recalls": "1"}
    )
    assert [job["id"] for job in json.loads(pending.body)["jobs"]] == [first["id"]]
    # Nor to a session without one: the session would not follow the target.
    error = await call(
        jp_fetch,
        "PATCH",
        f"api/recall/jobs/{second['id']}",
        {"target": {"type": "kernel", "path": "three.ipynb"}},
        expect=409,
    )
    assert "two.ipynb" in error["message"]
    # A new target in the same session is an ordinary edit.
    same = {"type": "kernel", "path": "two.ipynb", "kernel_id": "k-1"}
    moved = await call(jp_fetch, "PATCH", f"api/recall/jobs/{second['id']}", {"target": same})
    assert (moved["target"], moved["session"]) == (same, "two.ipynb")


async def test_a_batch_with_two_recalls_for_one_session_names_its_own_jobs(jp_fetch):
    target = {"type": "kernel", "path": "batch.ipynb"}
    body = {"jobs": [{**RECALL, "target": target}, {**RECALL, "when": "in 2h", "target": target}]}
    error = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=409)
    assert "jobs[1]" in error["message"]
    assert "jobs[0]" in error["message"]
    assert (await call(jp_fetch, "GET", "api/recall/jobs"))["jobs"] == []
    # Against a recall that exists, the conflict names that one, which can be fetched.
    existing = await call(
        jp_fetch, "POST", "api/recall/jobs", {**RECALL, "target": target}, expect=201
    )
    error = await call(
        jp_fetch, "POST", "api/recall/jobs", {"jobs": [{**RECALL, "target": target}]}, expect=409
    )
    named = re.findall(r"recall (\w+);", error["message"])
    assert named == [existing["id"]], error
    assert error["pending_recall"] == {"session": "batch.ipynb", "recall_id": existing["id"]}
    await call(jp_fetch, "GET", f"api/recall/jobs/{named[0]}")


# --- the spec and the code agree on every limit -------------------------------------------------


def _schemas():
    return openapi()["components"]["schemas"]


def test_openapi_states_the_text_limits_of_the_code():
    for schema in ("NewJob", "JobPatch", "OwnedJobSpec"):
        properties = _schemas()[schema]["properties"]
        for field, limit in TEXT_LIMITS.items():
            if field in properties:
                assert properties[field]["maxLength"] == limit, (schema, field)
                assert properties[field]["pattern"] == "^[^\\x00]*$", (schema, field)
    parse = openapi()["paths"]["/api/recall/parse"]["post"]["requestBody"]["content"]
    parse_props = parse["application/json"]["schema"]["properties"]
    assert parse_props["when"]["maxLength"] == TEXT_LIMITS["when"]
    assert parse_props["tz"]["maxLength"] == TEXT_LIMITS["tz"]


def test_openapi_states_the_policy_ranges_of_the_code():
    policies = _schemas()["Policies"]["properties"]
    assert (policies["max_runs"]["minimum"], policies["max_runs"]["maximum"]) == (1, MAX_RUNS)
    for name in ("jitter", "catchup_window"):
        assert (policies[name]["minimum"], policies[name]["maximum"]) == (0, MAX_SECONDS)
    timeout = policies["timeout"]
    assert (timeout["exclusiveMinimum"], timeout["maximum"]) == (0, MAX_SECONDS)


def test_openapi_states_the_lifecycle_ranges_of_the_code():
    policies = _schemas()["Policies"]["properties"]
    pause = policies["pause_after_failures"]
    assert (pause["minimum"], pause["maximum"]) == (1, MAX_PAUSE_AFTER_FAILURES)
    keep = policies["keep_runs"]
    assert (keep["minimum"], keep["maximum"]) == (0, MAX_KEEP_RUNS)
    keep_for = policies["keep_runs_for"]
    assert (keep_for["exclusiveMinimum"], keep_for["maximum"]) == (0, MAX_SECONDS)


def test_openapi_states_the_retry_ranges_of_the_code():
    retries = _schemas()["Policies"]["properties"]["retries"]
    fields = retries["properties"]
    assert (retries["minimum"], retries["maximum"]) == (0, MAX_RETRIES)
    assert (fields["max"]["minimum"], fields["max"]["maximum"]) == (0, MAX_RETRIES)
    assert (fields["backoff"]["minimum"], fields["backoff"]["maximum"]) == (0, MAX_SECONDS)
    assert (fields["factor"]["minimum"], fields["factor"]["maximum"]) == (1, MAX_RETRY_FACTOR)
    assert (fields["jitter"]["minimum"], fields["jitter"]["maximum"]) == (0, 1)
    assert fields["on"]["items"]["enum"] == list(RETRY_ON)
    assert sorted(fields) == sorted(RETRY_FIELDS)


def _path_parameters():
    for template, item in openapi()["paths"].items():
        declared = list(item.get("parameters", []))
        for method in ("get", "post", "put", "patch", "delete"):
            declared += item.get(method, {}).get("parameters", [])
        for parameter in declared:
            if parameter["in"] == "path":
                yield template, parameter


def test_openapi_path_patterns_are_the_routes_patterns():
    seen = set()
    for template, parameter in _path_parameters():
        pattern = parameter["schema"]["pattern"]
        expected = OWNER_PATTERN.pattern if parameter["name"] == "plugin_owner" else ID_PATTERN
        assert pattern == f"^{expected}$", (template, parameter["name"])
        seen.add(parameter["name"])
    assert seen == {"job_id", "run_id", "watcher_id", "approval_id", "plugin_owner"}


def test_openapi_query_enums_are_the_codes():
    jobs = {p["name"]: p for p in openapi()["paths"]["/api/recall/jobs"]["get"]["parameters"]}
    assert jobs["schedule_kind"]["schema"]["enum"] == list(SCHEDULE_KINDS)
    assert jobs["pending_recalls"]["schema"]["enum"] == list(FLAGS)


def test_integer_digit_limit_leaves_room_for_every_numeric_field():
    # Every numeric limit fits in the digits a body may carry, so a field's own range answers.
    assert len(str(MAX_RUNS)) < MAX_INTEGER_DIGITS
    assert len(str(MAX_SECONDS)) < MAX_INTEGER_DIGITS


@pytest.mark.parametrize(
    ("path", "name", "values"),
    [
        ("/api/recall/jobs", "status", [s.value for s in JobStatus]),
        ("/api/recall/jobs", "kind", [k.value for k in JobKind]),
        ("/api/recall/runs", "status", [s.value for s in RunStatus]),
    ],
)
def test_openapi_list_patterns_accept_exactly_the_codes_values(path, name, values):
    parameters = {p["name"]: p for p in openapi()["paths"][path]["get"]["parameters"]}
    pattern = re.compile(parameters[name]["schema"]["pattern"])
    assert pattern.search(",".join(values))
    assert all(pattern.search(value) for value in values)
    assert pattern.search("")
    assert not pattern.search(f"{values[0]},nope")
    assert not pattern.search(values[0].upper())


def test_openapi_states_the_limits_kept_beside_their_code():
    from jupyter_recall.engine import notify
    from jupyter_recall.server import watcher_options
    from jupyter_recall.server.serialize import MAX_RUNS_LIMIT
    from jupyter_recall.store.watchers import RING_SIZE

    notification = _schemas()["NewNotification"]["properties"]
    assert notification["message"]["maxLength"] == notify.MAX_MESSAGE
    assert notification["title"]["maxLength"] == notify.MAX_TITLE
    assert notification["tags"]["maxItems"] == notify.MAX_TAGS
    assert notification["tags"]["items"]["maxLength"] == notify.MAX_TAG
    assert notification["priority"]["enum"] == list(notify.PRIORITIES)
    action = _schemas()["Action"]["properties"]
    assert action["message"]["maxLength"] == notify.MAX_MESSAGE
    assert action["title"]["maxLength"] == notify.MAX_TITLE
    assert action["priority"]["enum"] == list(notify.PRIORITIES)
    interval = _schemas()["NewWatcher"]["properties"]["interval"]
    assert (interval["minimum"], interval["maximum"]) == (
        watcher_options.MIN_INTERVAL,
        watcher_options.MAX_INTERVAL,
    )
    paths = openapi()["paths"]
    for path in ("/api/recall/runs", "/api/recall/jobs/{job_id}/runs"):
        limit = {p["name"]: p for p in paths[path]["get"]["parameters"]}["limit"]["schema"]
        assert (limit["minimum"], limit["maximum"]) == (1, MAX_RUNS_LIMIT)
    last_n = paths["/api/recall/watchers/{watcher_id}"]["get"]["parameters"][0]["schema"]
    assert (last_n["minimum"], last_n["maximum"]) == (1, RING_SIZE)


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (
            "api/recall/jobs",
            {"when": "in 1h", "action": {"type": "code", "code": "\x00"}},
            "action.code",
        ),
        (
            "api/recall/jobs",
            {"jobs": [{"when": "in 1h", "action": {**NOTIFY, "message": "a\x00"}}]},
            "jobs[0].action.message",
        ),
        ("api/recall/watchers", {"tool": "filesystem.read", "label": "w\x00"}, "label"),
        (
            "api/recall/approvals",
            {
                "tool": "shell.run",
                "summary": "s\x00",
                "source": "s",
                "asked_by": "k",
                "timeout": 60,
            },
            "summary",
        ),
        (
            "api/recall/owners/plugin/jobs",
            {"jobs": [{"key": "k\x00", "when": "in 1h", "action": NOTIFY}]},
            "jobs[0].key",
        ),
    ],
)
async def test_a_nul_anywhere_in_a_body_is_a_400_naming_where(jp_fetch, path, body, field):
    """PostgreSQL stores no NUL in text: it reached the store and answered 503 "try again"."""
    error = await refused(jp_fetch, path, body)
    assert error["field"] == field
    assert "NUL" in error["message"]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("api/recall/watchers", {"tool": "filesystem.read", "label": "w\u202eevil"}, "label"),
        ("api/recall/watchers", {"tool": "filesystem.read", "label": "w" * 201}, "label"),
        (
            "api/recall/owners/plugin/jobs",
            {"jobs": [{"key": "k\u202eevil", "when": "in 1h", "action": NOTIFY}]},
            "jobs[0].key",
        ),
    ],
)
async def test_what_becomes_a_jobs_name_keeps_a_names_rules(jp_fetch, path, body, field):
    """A watcher's label and a declared job's key (without a name) are their jobs' names."""
    error = await refused(jp_fetch, path, body)
    assert error["field"] == field, error


async def refused(jp_fetch, path: str, body: dict) -> dict:
    """The 400 of a body sent to a collection (an owner's declaration is PUT, others POSTed)."""
    method = "PUT" if "owners" in path else "POST"
    return dict(await call(jp_fetch, method, path, body, expect=400))


async def test_a_name_of_blanks_is_refused_at_creation_as_by_patch(jp_fetch):
    body = {"when": "in 1h", "action": NOTIFY, "name": "   "}
    error = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=400)
    assert (error["field"], error["message"]) == ("name", "name: must not be empty")
    created = await call(jp_fetch, "POST", "api/recall/jobs", {**body, "name": ""}, expect=201)
    assert created["name"], "an empty name is the default one, from the action"
    patched = await call(
        jp_fetch, "PATCH", f"api/recall/jobs/{created['id']}", {"name": "   "}, expect=400
    )
    assert patched["field"] == "name"


@pytest.mark.parametrize(
    ("job", "field"),
    [
        ({"when": "bogus time", "action": NOTIFY}, "jobs[0].when"),
        (
            {"when": "in 1h", "action": {"type": "tool", "name": "no.such_tool", "params": {}}},
            "jobs[0].action.name",
        ),
        (
            {"when": "in 1h", "action": NOTIFY, "policies": {"max_runs": 0}},
            "jobs[0].policies.max_runs",
        ),
    ],
)
async def test_a_batch_of_one_names_its_errors_by_index_as_a_longer_one(jp_fetch, job, field):
    alone = await call(jp_fetch, "POST", "api/recall/jobs", {"jobs": [job]}, expect=400)
    second = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        {"jobs": [{"when": "in 1h", "action": NOTIFY}, job]},
        expect=400,
    )
    assert alone["field"] == field, alone
    assert second["field"] == field.replace("jobs[0]", "jobs[1]"), second
