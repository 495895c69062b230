"""A job for a fresh kernel of a spec the server does not have is refused at creation, naming
``target.kernel_name`` and listing the specs there are; a spec installed after the server read
its list is accepted (a name not known is looked up again before it is refused)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_recall.server.authorization import JobShape, shape_of
from jupyter_recall.server.kernel_checks import FRESH_FOR, KernelSpecNames
from jupyter_recall.server.serialize import new_job_from_json
from tests.server.rest import call


def headless_job(kernel_name: str) -> dict:
    return {
        "when": "in 1h",
        "action": {"type": "code", "code": "print(1)"},
        "target": {"type": "headless", "kernel_name": kernel_name},
    }


def install_kernel_spec(data_dir: Path, name: str) -> None:
    spec_dir = data_dir / "kernels" / name
    spec_dir.mkdir(parents=True)
    argv = ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec = {"argv": argv, "display_name": name, "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))


async def test_an_unknown_kernel_spec_is_refused_listing_the_specs(jp_fetch):
    error = await call(jp_fetch, "POST", "api/recall/jobs", headless_job("pyhton3"), expect=400)
    assert error["field"] == "target.kernel_name"
    assert "no kernel spec named 'pyhton3'" in error["message"]
    assert "python3" in error["accepted"]
    assert (await call(jp_fetch, "GET", "api/recall/jobs"))["jobs"] == []


async def test_a_known_kernel_spec_is_accepted(jp_fetch):
    job = await call(jp_fetch, "POST", "api/recall/jobs", headless_job("python3"), expect=201)
    assert job["target"] == {"type": "headless", "kernel_name": "python3"}


async def test_a_spec_installed_after_the_list_was_read_is_accepted(jp_fetch, jp_data_dir):
    await call(jp_fetch, "POST", "api/recall/jobs", headless_job("python3"), expect=201)
    await call(jp_fetch, "POST", "api/recall/jobs", headless_job("later"), expect=400)
    install_kernel_spec(jp_data_dir, "later")
    job = await call(jp_fetch, "POST", "api/recall/jobs", headless_job("later"), expect=201)
    assert job["target"]["kernel_name"] == "later"


async def test_in_a_batch_the_error_names_the_job(jp_fetch):
    jobs = [headless_job("python3"), headless_job("nope")]
    error = await call(jp_fetch, "POST", "api/recall/jobs", {"jobs": jobs}, expect=400)
    assert error["field"] == "jobs[1].target.kernel_name"
    assert (await call(jp_fetch, "GET", "api/recall/jobs"))["jobs"] == []


async def test_a_change_to_an_unknown_spec_is_refused(jp_fetch):
    job = await call(jp_fetch, "POST", "api/recall/jobs", headless_job("python3"), expect=201)
    change = {"target": {"type": "headless", "kernel_name": "nope"}}
    error = await call(jp_fetch, "PATCH", f"api/recall/jobs/{job['id']}", change, expect=400)
    assert error["field"] == "target.kernel_name"
    kept = await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}")
    assert kept["target"]["kernel_name"] == "python3"


async def test_a_declared_job_on_an_unknown_spec_is_refused(jp_fetch):
    declared = {"jobs": [{"key": "k", **headless_job("nope"), "when": "every 1h"}]}
    error = await call(jp_fetch, "PUT", "api/recall/owners/pkg/jobs", declared, expect=400)
    assert error["field"].endswith("target.kernel_name")


class Specs:
    """A spec manager's ``get_all_specs``, counting reads; raises while ``down``."""

    def __init__(self, *names: str) -> None:
        self.names = list(names)
        self.reads = 0
        self.down = False

    def __call__(self) -> dict[str, object]:
        self.reads += 1
        if self.down:
            raise ConnectionError("gateway unreachable")
        return {name: {"spec": {}} for name in self.names}


def shape(kernel_name: str) -> JobShape:
    return shape_of(new_job_from_json(headless_job(kernel_name)))


@pytest.mark.anyio
async def test_the_names_are_read_again_only_when_stale_or_missing_a_name():
    specs, now = Specs("python3"), [0.0]
    names = KernelSpecNames(specs, clock=lambda: now[0])
    await names.check([shape("python3")])
    await names.check([shape("python3")])
    assert specs.reads == 1
    now[0] = FRESH_FOR + 1
    await names.check([shape("python3")])
    assert specs.reads == 2
    specs.names.append("r")
    await names.check([shape("r")])
    assert specs.reads == 3


@pytest.mark.anyio
async def test_specs_that_cannot_be_read_leave_the_job_to_its_runs():
    specs = Specs("python3")
    specs.down = True
    await KernelSpecNames(specs).check([shape("anything")])
    assert specs.reads == 1
