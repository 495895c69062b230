"""A policy's ``end_at`` without a UTC offset is a wall time in the job's zone (its ``tz``, else
the server's default), read as ``when`` is, and stored with that zone's offset; one with an
offset is that instant."""

from __future__ import annotations

import pytest

from tests.server.rest import call

SERVER_ZONE = "Asia/Kolkata"


@pytest.fixture
def recall_config(recall_config: dict) -> dict:
    return {**recall_config, "default_timezone": SERVER_ZONE}


def job(when: str, end_at: str, **fields: object) -> dict:
    action = {"type": "notification", "message": "hi"}
    return {"when": when, "action": action, "policies": {"end_at": end_at}, **fields}


async def test_a_wall_time_is_read_in_the_jobs_zone(jp_fetch):
    body = job("every day at 9am", "2031-01-05T09:00", tz="America/New_York")
    created = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert created["policies"]["end_at"] == "2031-01-05T09:00:00-05:00"


async def test_without_a_tz_the_servers_default_zone_is_used(jp_fetch):
    assert (await call(jp_fetch, "GET", "api/recall/info"))["default_tz"] == SERVER_ZONE
    body = job("every 1h", "2031-07-01T18:00")
    created = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert created["policies"]["end_at"] == "2031-07-01T18:00:00+05:30"


async def test_an_instant_with_an_offset_is_kept(jp_fetch):
    body = job("every 1h", "2031-01-05T09:00:00+05:30", tz="Europe/Paris")
    created = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert created["policies"]["end_at"] == "2031-01-05T09:00:00+05:30"


async def test_the_zone_decides_whether_the_end_comes_before_the_first_occurrence(jp_fetch):
    # 09:00 in Tokyo comes before the 10:00 occurrence; 09:00 UTC would come after it.
    body = job("2031-01-05 10:00", "2031-01-05T09:00", tz="Asia/Tokyo")
    error = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=400)
    assert error["field"] == "policies.end_at"
    assert "2031-01-05T09:00:00+09:00 is before the first occurrence" in error["message"]


async def test_a_change_reads_the_wall_time_in_the_jobs_zone(jp_fetch):
    body = {"when": "every day at 9am", "action": {"type": "notification", "message": "hi"}}
    created = await call(
        jp_fetch, "POST", "api/recall/jobs", {**body, "tz": "Europe/Paris"}, expect=201
    )
    path = f"api/recall/jobs/{created['id']}"
    summer = await call(jp_fetch, "PATCH", path, {"policies": {"end_at": "2031-07-01T18:00"}})
    assert summer["policies"]["end_at"] == "2031-07-01T18:00:00+02:00"
    moved = {"tz": "Asia/Tokyo", "policies": {"end_at": "2031-07-01T18:00"}}
    tokyo = await call(jp_fetch, "PATCH", path, moved)
    assert tokyo["policies"]["end_at"] == "2031-07-01T18:00:00+09:00"
