"""A fuzzer nobody on the project wrote, against a live server: schemathesis (4.x) drives every
operation of ``openapi.yaml`` (the SSE stream aside) with all of its checks, a bounded number of
examples per operation and a fixed seed, authenticated with the server's token.

It must find no server error (5xx) and no answer outside the spec (status, content type,
headers, body schema). Two checks are switched off because they are wrong about jupyter_server;
the reasons are next to them in ``CONFIG``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import hypothesis
import pytest
import schemathesis
from schemathesis import Case
from schemathesis.config import SchemathesisConfig

from tests.server.live_server import TOKEN, LiveServer
from tests.server.rest import OPENAPI_PATH

EXAMPLES_PER_OPERATION = 25
STATEFUL_SCENARIOS = 30
SENT: list[str] = []
"""The requests sent, for the figure printed at the end (``pytest -s``)."""

CONFIG = SchemathesisConfig.from_dict(
    {
        "seed": 17,
        "headers": {"Authorization": f"token {TOKEN}"},
        # deterministic: Hypothesis derandomized, so a failure here fails the same way again.
        "generation": {
            "max-examples": EXAMPLES_PER_OPERATION,
            "deterministic": True,
            "database": "none",
        },
        "checks": {
            # It expects 401 for a request without credentials; jupyter_server's API handlers
            # answer 403 to anyone not logged in (APIHandler.get_login_url), which the spec
            # documents (responses/Forbidden). Nothing of ours decides that status.
            "missing_required_header": {"enabled": False},
            # It expects every schema-valid request to succeed. JSON Schema cannot say what a
            # time expression, a zone name, a tool name 'module.action' or a notebook path is,
            # so a schema-valid `when: "AAA"` is rightly a 400 naming the field.
            # (negative_data_rejection, the other direction, stays on.)
            "positive_data_acceptance": {"enabled": False},
        },
    }
)

schema = schemathesis.openapi.from_path(OPENAPI_PATH, config=CONFIG).exclude(
    path="/api/recall/events"  # an endless text/event-stream; tests/server/test_events.py
)


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    base: Path = tmp_path_factory.mktemp("fuzz")
    root = base / "root"
    root.mkdir()
    server = LiveServer(root, base / "recall.db").start()
    try:
        yield server
    finally:
        server.stop()
        print(f"\nschemathesis sent {len(SENT)} requests to {server.url}")


OPERATIONS = [result.ok().label for result in schema.get_all_operations()]
"""The fuzzed operations (``POST /api/recall/jobs``...), each fuzzed by a test of its own."""


def fuzz_one(label: str) -> Callable[..., None]:
    """The test of one operation: no server error and no answer outside the spec.

    One test per operation, not one ``schema.parametrize()`` test for all: under pytest 9 the
    items schemathesis makes of one test share one node id, and pytest-xdist, which schedules
    by node id, ran one operation of them all.
    """

    @pytest.mark.slow
    @schema.include(name=label).parametrize()
    def test(case: Case, live_server: LiveServer) -> None:
        SENT.append(case.operation.label)
        case.call_and_validate(base_url=live_server.url, timeout=30)

    return test


def name_of_test(label: str) -> str:
    """``POST /api/recall/jobs/{id}/pause`` -> ``test_post_api_recall_jobs_id_pause``."""
    return "test_" + re.sub(r"[^0-9A-Za-z]+", "_", label).strip("_").lower()


for _label in OPERATIONS:
    globals()[name_of_test(_label)] = fuzz_one(_label)


@pytest.mark.slow
def test_sequences_of_calls_keep_to_the_spec(live_server):
    """Stateful: ids that one answer returns are used by the next calls (the links between
    operations are those schemathesis infers from the paths and the answers)."""
    url = live_server.url
    answered: list[str] = []

    class Workflow(schema.as_state_machine()):  # type: ignore[misc]
        def get_call_kwargs(self, case):
            SENT.append(case.operation.label)
            return {"base_url": url, "timeout": 30}

        def after_call(self, response, case):
            super().after_call(response, case)  # records it for the stateful checks
            answered.append(f"{case.operation.label} -> {response.status_code}")

    try:
        Workflow.run(
            settings=hypothesis.settings(
                max_examples=STATEFUL_SCENARIOS,
                stateful_step_count=8,
                derandomize=True,
                database=None,
                deadline=None,
            )
        )
    except BaseException:
        # A failure against a live server may not replay the same (hypothesis then reports
        # only "Flaky..."): what was sent and what the server logged is the evidence.
        print("last calls:", *answered[-40:], sep="\n  ")
        print("server log (warnings and errors):")
        log = live_server.log.read_text(errors="replace").splitlines()
        print(
            *[line for line in log if line.startswith(("[W", "[E", "[C", "Traceback"))][-60:],
            sep="\n",
        )
        raise


def test_the_fuzzed_operations_are_every_documented_route_but_the_stream():
    documented = {
        (method.upper(), path)
        for path, item in schema.raw_schema["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    }
    fuzzed = {
        (result.ok().method.upper(), result.ok().path) for result in schema.get_all_operations()
    }
    assert fuzzed == documented - {("GET", "/api/recall/events")}
    assert len(fuzzed) > 25
    # ... each by a test of its own name.
    tests = {name for name in globals() if name.startswith("test_")}
    assert {name_of_test(label) for label in OPERATIONS} <= tests
    assert len({name_of_test(label) for label in OPERATIONS}) == len(OPERATIONS)
