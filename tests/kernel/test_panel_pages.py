"""The ``%jobs`` panel and ``recall.jobs()`` read the server's listing pages, in a real kernel."""

from __future__ import annotations

from tests.kernel.conftest import Kernel, KernelServer, wait_until
from tests.kernel.test_widgets import STATE, click

MANY = 55
PANEL = """
p = [s for s in _router.following("*") if hasattr(s, "select")][-1]
print(json.dumps({"ids": [j["id"] for j in p.jobs], "more": p.more.model_id,
    "more_shown": p.more.layout.display != "none"}))
"""


def _jobs_of(nb: Kernel, server: KernelServer, count: int) -> None:
    target = {"type": "kernel", "path": nb.path}
    body = {
        "jobs": [
            {
                "when": f"in {n + 1}h",
                "name": f"paged {n}",
                "action": {"type": "code", "code": "1"},
                "target": target,
                "session": nb.path,
            }
            for n in range(count)
        ]
    }
    server.request("POST", "/api/recall/jobs", body)


def test_the_panel_shows_a_page_then_more(nb, server):
    _jobs_of(nb, server, MANY)
    nb.ok("%jobs")
    state = nb.json(STATE + PANEL)
    assert len(state["ids"]) == 50
    assert state["more_shown"]
    click(nb, state["more"])
    state = wait_until(lambda: (s := nb.json(STATE + PANEL)) and len(s["ids"]) == MANY and s)
    assert not state["more_shown"]


def test_jobs_reads_every_page_or_the_first_limit(nb, server):
    _jobs_of(nb, server, MANY)
    counts = nb.json(
        "import jupyter_recall.kernel.jobs.api as _api\n"
        "print(json.dumps([len(_api.jobs()), len(_api.jobs(limit=3)),"
        " [j.name for j in _api.jobs(sort='name', limit=2)],"
        " len(_api.jobs(search='PAGED 5'))]))"
    )
    # 'paged 5' and 'paged 50' to 'paged 54'.
    assert counts == [MANY, 3, ["paged 0", "paged 1"], 6]
