"""Listing pages over REST against a real Jupyter server: filters, sort, cursors, counts."""

from __future__ import annotations

import base64

import pytest

from tests.server.rest import call

NOTIFY = {"type": "notification", "message": "hello"}


async def _create(jp_fetch, specs):
    body = {"jobs": [{"action": NOTIFY, **spec} for spec in specs]}
    return (await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201))["jobs"]


async def _walk(jp_fetch, path, key, **params):
    """Every item of a listing, page by page, and the number of pages."""
    items, pages, cursor = [], 0, None
    while True:
        query = dict(params, **({"cursor": cursor} if cursor else {}))
        page = await call(jp_fetch, "GET", path, **query)
        items += page[key]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            return items, pages


async def test_a_paused_job_has_no_next_fire_and_sorts_after_every_instant(jp_fetch):
    """A paused job does not fire: it used to keep its next fire, shown as a time in the past
    and sorted first by ``next_fire_at``, against what this page documents."""
    first, second = await _create(jp_fetch, [{"when": "in 1h"}, {"when": "every 30s"}])
    paused = await call(jp_fetch, "POST", f"api/recall/jobs/{first['id']}/pause")
    assert (paused["status"], paused["next_fire_at"]) == ("paused", None)
    assert paused["next_occurrence"] == first["next_occurrence"]
    by_fire = await call(jp_fetch, "GET", "api/recall/jobs", sort="next_fire_at")
    assert [job["id"] for job in by_fire["jobs"]] == [second["id"], first["id"]]
    resumed = await call(jp_fetch, "POST", f"api/recall/jobs/{first['id']}/resume")
    assert resumed["next_fire_at"] == first["next_fire_at"]
    by_fire = await call(jp_fetch, "GET", "api/recall/jobs", sort="next_fire_at")
    assert [job["id"] for job in by_fire["jobs"]] == [second["id"], first["id"]]
    skipped = await call(jp_fetch, "POST", f"api/recall/jobs/{second['id']}/pause")
    skipped = await call(jp_fetch, "POST", f"api/recall/jobs/{second['id']}/skip")
    assert (skipped["status"], skipped["next_fire_at"]) == ("paused", None)


async def test_an_unpaged_listing_is_the_first_page_of_100(jp_fetch):
    await _create(jp_fetch, [{"when": f"in {n + 1}h", "name": f"job {n}"} for n in range(105)])
    first = await call(jp_fetch, "GET", "api/recall/jobs")
    assert len(first["jobs"]) == 100
    assert first["next_cursor"]
    rest = await call(jp_fetch, "GET", "api/recall/jobs", cursor=first["next_cursor"])
    assert len(rest["jobs"]) == 5
    assert rest["next_cursor"] is None
    assert len({job["id"] for job in first["jobs"] + rest["jobs"]}) == 105


async def test_pages_in_each_sort_and_order_walk_every_job_once(jp_fetch):
    specs = [{"when": f"in {9 - n}h", "name": f"n{n % 3}"} for n in range(7)]
    jobs = await _create(jp_fetch, specs)
    cancelled = jobs[2]["id"]
    await call(jp_fetch, "POST", f"api/recall/jobs/{cancelled}/cancel")
    by_fire, pages = await _walk(
        jp_fetch, "api/recall/jobs", "jobs", sort="next_fire_at", limit="3"
    )
    assert pages == 3
    # Created later, firing sooner; a cancelled job has no next fire: it comes after all.
    assert by_fire[-1]["next_fire_at"] is None
    assert [job["id"] for job in by_fire] == [
        *(job["id"] for job in jobs[::-1] if job["id"] != cancelled),
        cancelled,
    ]
    by_name, _ = await _walk(
        jp_fetch, "api/recall/jobs", "jobs", sort="name", order="desc", limit="2"
    )
    names = [(job["name"], job["id"]) for job in by_name]
    assert names == sorted(names, reverse=True)
    assert len(names) == 7


async def test_filters_and_search_run_on_the_server(jp_fetch):
    await _create(
        jp_fetch,
        [
            {"when": "every 1h", "name": "Hourly report"},
            {"when": "in 2h", "name": "once report"},
            {"when": "every day at 09:00", "name": "other"},
        ],
    )
    found = await call(jp_fetch, "GET", "api/recall/jobs", q="REPORT", schedule_kind="interval")
    assert [job["name"] for job in found["jobs"]] == ["Hourly report"]
    assert (await call(jp_fetch, "GET", "api/recall/jobs", q="09:00"))["jobs"][0]["name"] == "other"


async def test_counts_by_status_follow_the_filters(jp_fetch):
    # "k" is in no hex job id: the search matches ids too.
    jobs = await _create(jp_fetch, [{"when": f"in {n + 1}h", "name": f"k{n}"} for n in range(4)])
    await call(jp_fetch, "POST", f"api/recall/jobs/{jobs[0]['id']}/pause")
    counts = await call(jp_fetch, "GET", "api/recall/jobs/counts")
    assert counts == {"total": 4, "by_status": {"active": 3, "paused": 1}, "running": 0}
    only = await call(jp_fetch, "GET", "api/recall/jobs/counts", q="k0")
    assert only == {"total": 1, "by_status": {"paused": 1}, "running": 0}


async def test_run_pages_of_a_job_and_of_the_user(jp_fetch):
    [job] = await _create(jp_fetch, [{"when": "in 1h"}])
    made = [
        (await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/trigger", expect=201))["id"]
        for _ in range(5)
    ]
    runs, pages = await _walk(jp_fetch, f"api/recall/jobs/{job['id']}/runs", "runs", limit="2")
    assert pages == 3
    assert sorted(run["id"] for run in runs) == sorted(made)
    everyone, _ = await _walk(jp_fetch, "api/recall/runs", "runs", limit="4")
    assert [run["id"] for run in everyone] == [run["id"] for run in runs]


@pytest.mark.parametrize(
    "cursor",
    [
        "not base64 at all!",
        base64.urlsafe_b64encode(b"[1, 2]").decode(),
        base64.urlsafe_b64encode(b'{"s": "name", "d": false, "v": "a", "i": "x"}').decode(),
        base64.urlsafe_b64encode(b'{"s": "created_at", "d": true, "v": "soon", "i": "x"}').decode(),
        "A" * 3000,
    ],
)
async def test_a_bad_cursor_is_a_400_naming_cursor(jp_fetch, cursor):
    error = await call(jp_fetch, "GET", "api/recall/jobs", expect=400, cursor=cursor)
    assert error["field"] == "cursor"
    error = await call(jp_fetch, "GET", "api/recall/runs", expect=400, cursor=cursor)
    assert error["field"] == "cursor"


def _forged(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


AN_INSTANT = '"2030-01-01T00:00:00+00:00"'
TOO_DEEP = _forged("[" * 1100)
"""Deeper than json decodes: a RecursionError, which was a 500."""


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("api/recall/jobs", {"cursor": TOO_DEEP}),
        ("api/recall/runs", {"cursor": TOO_DEEP}),
        ("api/recall/approvals", {"cursor": TOO_DEEP}),
        # Lone surrogates no store can encode (a UnicodeEncodeError, which was a 500): in the
        # id a page ends on, and in the name a page by name ends on.
        (
            "api/recall/jobs",
            {"cursor": _forged('{"s": "created_at", "d": true, "v": null, "i": "\\ud800"}')},
        ),
        (
            "api/recall/jobs",
            {
                "cursor": _forged('{"s": "name", "d": false, "v": "\\ud800", "i": "x"}'),
                "sort": "name",
            },
        ),
        (
            "api/recall/runs",
            {"cursor": _forged(f'{{"f": {AN_INSTANT}, "c": {AN_INSTANT}, "i": "\\ud800"}}')},
        ),
        ("api/recall/approvals", {"cursor": _forged(f'{{"c": {AN_INSTANT}, "i": "\\ud800"}}')}),
    ],
)
async def test_a_forged_cursor_is_a_400_naming_cursor(jp_fetch, path, query):
    error = await call(jp_fetch, "GET", path, expect=400, **query)
    assert error["field"] == "cursor"


async def test_bad_sort_order_and_search_name_their_field(jp_fetch):
    error = await call(jp_fetch, "GET", "api/recall/jobs", expect=400, sort="owner")
    assert error["field"] == "sort"
    assert "next_fire_at" in error["accepted"]
    error = await call(jp_fetch, "GET", "api/recall/jobs", expect=400, order="up")
    assert error["field"] == "order"
    error = await call(jp_fetch, "GET", "api/recall/jobs", expect=400, q="x" * 201)
    assert error["field"] == "q"


async def test_a_nul_in_the_search_is_refused_as_sent(jp_fetch):
    # tornado's get_query_argument turns control characters into spaces: the check reads q as
    # it came, so ?q=%00 is refused rather than answered as an empty search.
    for path in ("api/recall/jobs", "api/recall/jobs/counts"):
        for text in ("\x00", "report\x00"):
            error = await call(jp_fetch, "GET", path, expect=400, q=text)
            assert error["field"] == "q"
            assert "NUL" in error["message"]
