"""POST /api/recall/parse with ``"check": true``: a form checking what is typed gets an answer
for an expression that does not parse (200, ``valid: false`` and the error body), not a 400."""

from __future__ import annotations

from tests.server.rest import call


async def test_a_bad_expression_checked_is_an_answer_naming_the_field(jp_fetch):
    answer = await call(
        jp_fetch, "POST", "api/recall/parse", {"when": "next blue moon", "check": True}
    )
    assert answer["valid"] is False
    assert answer["when"] == "next blue moon"
    assert answer["error"]["field"] == "when"
    assert answer["error"]["message"].startswith("when: cannot parse 'next blue moon'")
    assert any(form.startswith("cron:") for form in answer["error"]["accepted"])


async def test_a_good_expression_checked_is_the_preview_marked_valid(jp_fetch):
    answer = await call(
        jp_fetch, "POST", "api/recall/parse", {"when": "every day at 09:00", "check": True}
    )
    assert answer["valid"] is True
    assert answer["kind"] == "cron"
    assert len(answer["next_fire_times"]) == 5


async def test_without_check_a_bad_expression_stays_a_400(jp_fetch):
    error = await call(jp_fetch, "POST", "api/recall/parse", {"when": "next blue moon"}, expect=400)
    assert error["field"] == "when"


async def test_check_must_be_a_boolean(jp_fetch):
    body = {"when": "in 5 min", "check": "yes"}
    error = await call(jp_fetch, "POST", "api/recall/parse", body, expect=400)
    assert error["field"] == "check"
    assert "'yes'" in error["message"]
