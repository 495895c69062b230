"""PATCH /api/recall/jobs/{id}: ``policies`` and ``options`` are JSON merge patches (RFC 7386)
of the job's: keys given replace, null removes (a policy back to its default), nested objects
merge, keys not given are kept."""

from __future__ import annotations

import asyncio

from tests.server.rest import call, openapi

JOBS = "api/recall/jobs"
RETRIES = {"max": 3, "backoff": 20.0, "factor": 3.0, "jitter": 0.5, "on": ["failed"]}
POLICIES = {"overlap": "allow", "retries": RETRIES, "keep_runs": 7, "catchup_window": 60}
OPTIONS = {"output_channel": "ops", "output_config": {"url": "u", "token": "t"}, "x": 0}


async def created(jp_fetch) -> tuple[str, dict]:
    body = {
        "when": "every 1h",
        "action": {"type": "notification", "message": "m"},
        "policies": POLICIES,
        "options": OPTIONS,
    }
    job = await call(jp_fetch, "POST", JOBS, body, expect=201)
    return f"{JOBS}/{job['id']}", job


async def patch(jp_fetch, path: str, body: dict, expect: int = 200) -> dict:
    answer = await call(jp_fetch, "PATCH", path, body, expect=expect)
    if expect == 200:
        assert answer == await call(jp_fetch, "GET", path)  # as stored
    return answer


async def test_a_partial_policy_patch_keeps_the_other_policies(jp_fetch):
    path, job = await created(jp_fetch)
    changed = await patch(jp_fetch, path, {"policies": {"timeout": 5}})
    assert changed["policies"] == {**job["policies"], "timeout": 5.0}
    assert (changed["policies"]["overlap"], changed["policies"]["keep_runs"]) == ("allow", 7)
    assert changed["policies"]["retries"] == RETRIES
    assert (await patch(jp_fetch, path, {"policies": {}}))["policies"] == changed["policies"]


async def test_null_resets_one_policy_to_its_default(jp_fetch):
    path, job = await created(jp_fetch)
    changed = await patch(jp_fetch, path, {"policies": {"overlap": None, "keep_runs": None}})
    assert changed["policies"] == {**job["policies"], "overlap": "skip", "keep_runs": None}
    # catchup_window's null is a value of its own, as at creation: no limit.
    unlimited = await patch(jp_fetch, path, {"policies": {"catchup_window": None}})
    assert unlimited["policies"]["catchup_window"] is None
    assert unlimited["policies"]["retries"] == RETRIES
    reset = await patch(jp_fetch, path, {"policies": None})
    assert reset["policies"]["overlap"] == "skip"
    assert (reset["policies"]["retries"], reset["policies"]["catchup_window"]) == (None, 3600.0)


async def test_retries_merge_key_by_key(jp_fetch):
    path, _ = await created(jp_fetch)
    changed = await patch(jp_fetch, path, {"policies": {"retries": {"max": 5, "jitter": None}}})
    assert changed["policies"]["retries"] == {**RETRIES, "max": 5, "jitter": 0.0}
    bare = await patch(jp_fetch, path, {"policies": {"retries": 2}})  # not an object: replaces
    assert bare["policies"]["retries"]["backoff"] == 10.0
    gone = await patch(jp_fetch, path, {"policies": {"retries": None}})
    assert gone["policies"]["retries"] is None
    error = await patch(jp_fetch, path, {"policies": {"retries": {"backoff": 1}}}, 400)
    assert error["field"] == "policies.retries.max"
    # An unknown key is refused even as null, which would remove nothing.
    for body in ({"zz": None}, {"zz": 1}, {"retries": {"zz": None}}):
        error = await patch(jp_fetch, path, {"policies": body}, 400)
        assert error["field"] in ("policies.zz", "policies.retries.zz")
        assert error["accepted"]
    error = await patch(jp_fetch, path, {"policies": {"jitter": -1}}, 400)
    assert error["field"] == "policies.jitter"


async def test_options_merge_and_null_removes_a_key(jp_fetch):
    path, _ = await created(jp_fetch)
    changed = await patch(jp_fetch, path, {"options": {"x": 1}})
    assert changed["options"] == {**OPTIONS, "x": 1}
    nested = await patch(jp_fetch, path, {"options": {"output_config": {"token": None}}})
    assert nested["options"]["output_config"] == {"url": "u"}
    assert nested["options"]["output_channel"] == "ops"
    removed = await patch(jp_fetch, path, {"options": {"output_channel": None, "x": None}})
    assert removed["options"] == {"output_config": {"url": "u"}}
    assert (await patch(jp_fetch, path, {"options": None}))["options"] == {}


def test_the_patch_schema_states_the_bounds_of_the_policies():
    schemas = openapi()["components"]["schemas"]
    full, patch = schemas["Policies"]["properties"], schemas["PoliciesPatch"]["properties"]
    assert set(full) == set(patch)
    bounds = ("minimum", "maximum", "exclusiveMinimum")
    for name, schema in full.items():
        assert {k: schema.get(k) for k in bounds} == {k: patch[name].get(k) for k in bounds}
    retries, patched = full["retries"]["properties"], patch["retries"]["properties"]
    for name, schema in retries.items():
        assert {k: schema.get(k) for k in bounds} == {k: patched[name].get(k) for k in bounds}


async def test_edits_at_the_same_instant_each_merge_into_the_others(jp_fetch):
    """Each PATCH merges into the job as the one before it left it: a merge computed from a
    job another request changed meanwhile is computed again, so no edit undoes another."""
    path, job = await created(jp_fetch)
    keys = [f"k{n}" for n in range(12)]
    edits = [call(jp_fetch, "PATCH", path, {"options": {key: key}}) for key in keys]
    edits.append(call(jp_fetch, "PATCH", path, {"policies": {"timeout": 5}}))
    edits.append(call(jp_fetch, "PATCH", path, {"policies": {"keep_runs": 3}}))
    await asyncio.gather(*edits)
    stored = await call(jp_fetch, "GET", path)
    assert stored["options"] == {**OPTIONS, **{key: key for key in keys}}
    assert stored["policies"] == {**job["policies"], "timeout": 5.0, "keep_runs": 3}
