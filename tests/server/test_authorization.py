"""Recall is no way around the server's permissions: custom Authorizers on a real server.

Every job is authorized as jupyter_server would authorize doing its work directly
(``server/permissions.py``), when a request creates, changes or triggers it, and again when a
run starts. The Authorizers here refuse what ``Refusals.current`` lists, read at each call, so
a test can revoke a permission while the server runs.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import nbformat
import pytest
from jupyter_core.utils import ensure_async
from jupyter_server.auth import Authorizer, IdentityProvider
from jupyter_server.auth.identity import User
from jupyter_server.base.handlers import JupyterHandler
from traitlets.config import Config

from jupyter_recall.client.remote import Client, ServerInfo
from jupyter_recall.core.errors import PermissionDeniedError, ValidationError
from jupyter_recall.core.payloads import ACTION_TYPES, TARGET_TYPES, check_action_fits_target
from tests.server.rest import call

KERNELS_WRITE = ("write", "kernels")
KERNELS_EXECUTE = ("execute", "kernels")
SESSIONS_WRITE = ("write", "sessions")
CONTENTS_READ = ("read", "contents")
CONTENTS_WRITE = ("write", "contents")
TERMINALS_WRITE = ("write", "terminals")
TERMINALS_EXECUTE = ("execute", "terminals")
EVERY_PERMISSION = {
    (action, resource)
    for action in ("read", "write", "execute")
    for resource in ("kernels", "sessions", "contents", "terminals", "files", "api", "events")
}
NO_KERNELS = {KERNELS_WRITE, KERNELS_EXECUTE, SESSIONS_WRITE}
"""The issue's Authorizer: no kernels, no sessions (``POST /api/kernels`` is ``write``)."""


class Refusals:
    current: ClassVar[set[tuple[str, str]]] = set()
    calls: ClassVar[list[tuple[Any, Any, str, str]]] = []


class RefusingAuthorizer(Authorizer):
    """Refuses the (action, resource) pairs in ``Refusals.current``."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        Refusals.calls.append((handler, user, action, resource))
        return (action, resource) not in Refusals.current


class AsyncRefusingAuthorizer(Authorizer):
    """The same, answering through a coroutine (jupyter_server awaits those too)."""

    async def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        await asyncio.sleep(0)
        Refusals.calls.append((handler, user, action, resource))
        return (action, resource) not in Refusals.current


class FailingOnRunsAuthorizer(Authorizer):
    """Allows requests; raises when asked about a run (a third-party bug)."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        if "X-Jupyter-Recall-Run" in handler.request.headers:
            raise RuntimeError("the policy service is down")
        return True


@pytest.fixture
def authorizer_class() -> type[Authorizer]:
    return RefusingAuthorizer


@pytest.fixture
def recall_config(recall_config: dict) -> dict:
    # shell.run asks for approval by default, which a server-side job cannot get.
    return {**recall_config, "tool_policies": {"shell.run": "auto"}}


@pytest.fixture
def jp_server_config(recall_config: dict, authorizer_class: type[Authorizer]) -> Config:
    Refusals.current = set()
    Refusals.calls = []
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {"jupyter_recall": True},
                "allow_root": True,
                "authorizer_class": authorizer_class,
            },
            "RecallApp": recall_config,
        }
    )


def code(source: str = "1") -> dict:
    return {"type": "code", "code": source}


TOOL_SHELL = {"type": "tool", "name": "shell.run", "params": {"command": "true"}}
NOTIFY = {"type": "notification", "message": "hi"}
NOTEBOOK = {"type": "notebook", "path": "nb.ipynb"}
INSTRUCTION = {"type": "instruction", "instruction": "look again"}
LIVE = {"type": "kernel", "path": "live.ipynb"}
HEADLESS = {"type": "headless"}
SERVER = {"type": "server"}

# (job body without "when", the permissions it needs)
CASES: dict[str, tuple[dict, set[tuple[str, str]]]] = {
    "code-kernel": ({"action": code(), "target": LIVE}, {KERNELS_EXECUTE}),
    "code-kernel-start": (
        {"action": code(), "target": LIVE, "options": {"on_missing_kernel": "start"}},
        {KERNELS_EXECUTE, SESSIONS_WRITE},
    ),
    "code-headless": ({"action": code(), "target": HEADLESS}, {KERNELS_WRITE, KERNELS_EXECUTE}),
    "instruction-kernel": ({"action": INSTRUCTION, "target": LIVE}, {KERNELS_EXECUTE}),
    "recall-kernel": (
        {"kind": "recall", "action": INSTRUCTION, "target": LIVE},
        {KERNELS_EXECUTE},
    ),
    "instruction-headless": (
        {"action": INSTRUCTION, "target": HEADLESS},
        {KERNELS_WRITE, KERNELS_EXECUTE},
    ),
    "notebook-headless": (
        {"action": NOTEBOOK, "target": HEADLESS},
        {KERNELS_WRITE, KERNELS_EXECUTE, CONTENTS_READ, CONTENTS_WRITE},
    ),
    "notebook-server": (
        {"action": NOTEBOOK, "target": SERVER},
        {KERNELS_WRITE, KERNELS_EXECUTE, CONTENTS_READ, CONTENTS_WRITE},
    ),
    "tool-shell-server": (
        {"action": TOOL_SHELL, "target": SERVER},
        {TERMINALS_WRITE, TERMINALS_EXECUTE},
    ),
    "tool-shell-kernel": (
        {"action": TOOL_SHELL, "target": LIVE},
        {TERMINALS_WRITE, TERMINALS_EXECUTE},
    ),
    "tool-write-server": (
        {
            "action": {
                "type": "tool",
                "name": "filesystem.write",
                "params": {"path": "x", "content": ""},
            }
        },
        {CONTENTS_WRITE},
    ),
    "tool-read-headless": (
        {
            "action": {"type": "tool", "name": "filesystem.read", "params": {"path": "x"}},
            "target": HEADLESS,
        },
        {CONTENTS_READ},
    ),
    "tool-http-server": (
        {"action": {"type": "tool", "name": "http.get", "params": {"url": "http://127.0.0.1:9/"}}},
        set(),
    ),
    "notification-server": ({"action": NOTIFY, "target": SERVER}, set()),
    "notification-kernel": ({"action": NOTIFY, "target": LIVE}, set()),
    "notification-headless": ({"action": NOTIFY, "target": HEADLESS}, set()),
}


def test_the_cases_cover_every_action_type_on_every_target_it_fits():
    covered = {
        (body["action"]["type"], body.get("target", SERVER)["type"]) for body, _ in CASES.values()
    }
    for action_type in ACTION_TYPES:
        for target_type in TARGET_TYPES:
            try:
                check_action_fits_target({"type": action_type}, {"type": target_type})
            except ValidationError:
                continue
            assert (action_type, target_type) in covered


async def post_job(jp_fetch: Any, body: dict, expect: int) -> Any:
    return await call(jp_fetch, "POST", "api/recall/jobs", {"when": "in 1h", **body}, expect=expect)


async def job_ids(jp_fetch: Any) -> list[str]:
    return [job["id"] for job in (await call(jp_fetch, "GET", "api/recall/jobs"))["jobs"]]


def assert_refused(document: dict, permission: tuple[str, str]) -> None:
    action, resource = permission
    assert document["permission"] == {"action": action, "resource": resource}
    assert document["message"].startswith(
        f"User is not authorized to {action} on resource: {resource}."
    ), document


@pytest.mark.parametrize("case", sorted(CASES))
async def test_creation_needs_exactly_the_permissions_of_doing_it_directly(jp_fetch, case):
    body, needed = CASES[case]
    # Everything else refused: the job asks for nothing more than it needs.
    Refusals.current = EVERY_PERMISSION - needed
    await post_job(jp_fetch, body, 201)
    for permission in sorted(needed):
        Refusals.current = {permission}
        assert_refused(await post_job(jp_fetch, body, 403), permission)
    assert len(await job_ids(jp_fetch)) == 1


async def test_the_server_refuses_the_same_user_directly(jp_fetch):
    Refusals.current = set(NO_KERNELS)
    for path, body in (
        ("api/kernels", {}),
        ("api/sessions", {"path": "a.ipynb", "type": "notebook"}),
    ):
        response = await jp_fetch(path, method="POST", body=json.dumps(body), raise_error=False)
        assert response.code == 403, path
    refused = await post_job(jp_fetch, {"action": code(), "target": HEADLESS}, 403)
    assert_refused(refused, KERNELS_WRITE)
    opened = {"action": code(), "target": LIVE, "options": {"on_missing_kernel": "start"}}
    assert_refused(await post_job(jp_fetch, opened, 403), KERNELS_EXECUTE)
    Refusals.current = {SESSIONS_WRITE}
    assert_refused(await post_job(jp_fetch, opened, 403), SESSIONS_WRITE)
    # Notifications need nothing of kernels or sessions.
    await post_job(jp_fetch, {"action": NOTIFY}, 201)


async def test_a_batch_names_the_refused_job_and_creates_none(jp_fetch):
    Refusals.current = {KERNELS_EXECUTE}
    jobs = [
        {"when": "in 1h", "action": NOTIFY},
        {"when": "in 1h", "action": code(), "target": LIVE},
    ]
    refused = await call(jp_fetch, "POST", "api/recall/jobs", {"jobs": jobs}, expect=403)
    assert_refused(refused, KERNELS_EXECUTE)
    assert "jobs[1]: a code job runs code in a kernel" in refused["message"]
    assert await job_ids(jp_fetch) == []
    # A batch of one names its job too, as a longer one does.
    alone = await call(jp_fetch, "POST", "api/recall/jobs", {"jobs": jobs[1:]}, expect=403)
    assert "jobs[0]: a code job runs code in a kernel" in alone["message"]


async def test_patch_into_code_is_refused_and_leaves_the_job(jp_fetch):
    job = await post_job(jp_fetch, {"action": NOTIFY}, 201)
    Refusals.current = {KERNELS_EXECUTE}
    change = {"action": code(), "target": LIVE}
    refused = await call(jp_fetch, "PATCH", f"api/recall/jobs/{job['id']}", change, expect=403)
    assert_refused(refused, KERNELS_EXECUTE)
    kept = await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}")
    assert kept["action"]["type"] == "notification"
    # Options alone can ask for more: 'start' opens a session.
    Refusals.current = set()
    coded = await post_job(jp_fetch, change, 201)
    Refusals.current = {SESSIONS_WRITE}
    start = {"options": {"on_missing_kernel": "start"}}
    refused = await call(jp_fetch, "PATCH", f"api/recall/jobs/{coded['id']}", start, expect=403)
    assert_refused(refused, SESSIONS_WRITE)
    # Judged as the change leaves the job: a job that opens sessions can no longer be renamed,
    # but it can be changed into one that does not.
    Refusals.current = set()
    opener = await post_job(jp_fetch, {**change, **start}, 201)
    Refusals.current = {SESSIONS_WRITE}
    path = f"api/recall/jobs/{opener['id']}"
    assert_refused(await call(jp_fetch, "PATCH", path, {"name": "n"}, expect=403), SESSIONS_WRITE)
    assert (await call(jp_fetch, "PATCH", path, {"options": None}))["options"] == {}


async def test_owners_declaration_is_refused_whole(jp_fetch):
    Refusals.current = {TERMINALS_EXECUTE}
    jobs = [
        {"key": "ping", "when": "every 1h", "action": NOTIFY},
        {"key": "sh", "when": "every 1h", "action": TOOL_SHELL},
    ]
    path = "api/recall/owners/acme/jobs"
    refused = await call(jp_fetch, "PUT", path, {"jobs": jobs}, expect=403)
    assert_refused(refused, TERMINALS_EXECUTE)
    assert "jobs[1]: the tool shell.run" in refused["message"]
    assert (await call(jp_fetch, "GET", path))["jobs"] == []
    Refusals.current = set()
    declared = await call(jp_fetch, "PUT", path, {"jobs": jobs})
    assert declared["counts"]["created"] == 2


async def test_trigger_is_checked_again(jp_fetch):
    job = await post_job(jp_fetch, {"action": code(), "target": HEADLESS}, 201)
    Refusals.current = {KERNELS_WRITE}
    refused = await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/trigger", expect=403)
    assert_refused(refused, KERNELS_WRITE)
    assert (await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}/runs"))["runs"] == []


# --- when the run starts -------------------------------------------------------------------------


async def finished_run(jp_fetch: Any, job_id: str, timeout: float = 120.0) -> dict:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        runs = (await call(jp_fetch, "GET", f"api/recall/jobs/{job_id}/runs"))["runs"]
        done = [run for run in runs if run["status"] not in ("pending", "running")]
        if done:
            return done[-1]
        assert asyncio.get_running_loop().time() < deadline, f"no finished run: {runs}"
        await asyncio.sleep(0.2)


def writes(path: Path) -> str:
    return f"open({str(path)!r}, 'w').write('ran')"


async def appears(marker: Path, timeout: float = 120.0) -> None:
    """Wait for the file an allowed run writes (proof that the code would have run)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not marker.exists():
        assert asyncio.get_running_loop().time() < deadline, f"{marker} was never written"
        await asyncio.sleep(0.2)


async def revoked_run(jp_fetch: Any, body: dict, revoke: tuple[str, str]) -> dict:
    """Create the job while allowed (due in 2 s), revoke ``revoke``, and return its run."""
    job = await call(jp_fetch, "POST", "api/recall/jobs", {"when": "in 2s", **body}, expect=201)
    Refusals.current = {revoke}
    return await finished_run(jp_fetch, job["id"])


async def test_a_revoked_permission_fails_the_run_before_any_code(jp_fetch, tmp_path):
    marker = tmp_path / "ran.txt"
    body = {"action": code(writes(marker)), "target": HEADLESS}
    run = await revoked_run(jp_fetch, body, KERNELS_EXECUTE)
    assert run["status"] == "failed", run
    assert "is not authorized to execute on resource: kernels" in run["error"]
    assert "Nothing was executed" in run["error"]
    assert not marker.exists()
    # The same job, allowed again, does write the file: the check is what stopped it.
    Refusals.current = set()
    job_id = run["job_id"]
    await call(jp_fetch, "POST", f"api/recall/jobs/{job_id}/trigger", expect=201)
    await appears(marker)


async def test_a_revoked_session_permission_opens_no_session(jp_fetch, jp_root_dir, tmp_path):
    nbformat.write(nbformat.v4.new_notebook(), str(jp_root_dir / "live.ipynb"))
    marker = tmp_path / "ran.txt"
    body = {
        "action": code(writes(marker)),
        "target": LIVE,
        "options": {"on_missing_kernel": "start"},
    }
    run = await revoked_run(jp_fetch, body, SESSIONS_WRITE)
    assert run["status"] == "failed", run
    assert "is not authorized to write on resource: sessions" in run["error"]
    Refusals.current = set()
    sessions = json.loads((await jp_fetch("api", "sessions")).body)
    assert sessions == []
    assert not marker.exists()


async def test_a_revoked_notebook_run_leaves_no_executed_copy(jp_fetch, jp_root_dir, tmp_path):
    marker = tmp_path / "ran.txt"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(writes(marker))])
    nbformat.write(nb, str(jp_root_dir / "nb.ipynb"))
    run = await revoked_run(jp_fetch, {"action": NOTEBOOK, "target": HEADLESS}, CONTENTS_WRITE)
    assert run["status"] == "failed", run
    assert "is not authorized to write on resource: contents" in run["error"]
    assert not marker.exists()
    assert sorted(p.name for p in jp_root_dir.iterdir()) == ["nb.ipynb"]


async def test_a_revoked_terminal_permission_runs_no_command(jp_fetch, tmp_path):
    marker = tmp_path / "ran.txt"
    action = {"type": "tool", "name": "shell.run", "params": {"command": ["touch", str(marker)]}}
    run = await revoked_run(jp_fetch, {"action": action}, TERMINALS_EXECUTE)
    assert run["status"] == "failed", run
    assert "is not authorized to execute on resource: terminals" in run["error"]
    assert "the tool shell.run runs a command on the server" in run["error"]
    assert not marker.exists()
    Refusals.current = set()
    await call(jp_fetch, "POST", f"api/recall/jobs/{run['job_id']}/trigger", expect=201)
    await appears(marker)


async def test_notifications_run_whatever_is_revoked(jp_fetch):
    run = await revoked_run(jp_fetch, {"action": NOTIFY, "target": HEADLESS}, KERNELS_WRITE)
    assert run["status"] == "succeeded", run


@pytest.mark.parametrize("authorizer_class", [RefusingAuthorizer, AsyncRefusingAuthorizer])
async def test_the_run_is_asked_with_the_creators_identity(jp_fetch, authorizer_class):
    run = await revoked_run(jp_fetch, {"action": code(), "target": LIVE}, KERNELS_EXECUTE)
    assert run["status"] == "failed", run
    asked = [c for c in Refusals.calls if c[2:] == KERNELS_EXECUTE]
    (created_by, creator), (handler, user) = asked[0][:2], asked[-1][:2]
    # The User object the identity provider gave the creating request, on a JupyterHandler
    # whose request stands for the run.
    assert isinstance(user, User)
    assert user is creator
    assert isinstance(handler, JupyterHandler)
    assert handler is not created_by
    assert handler.request.path.endswith(f"/api/recall/jobs/{run['job_id']}/runs")
    assert handler.request.headers["X-Jupyter-Recall-Run"] == run["id"]
    assert handler.current_user is user
    assert f"user {user.username!r}" in run["error"]


@pytest.mark.parametrize("authorizer_class", [FailingOnRunsAuthorizer])
async def test_an_authorizer_that_fails_fails_the_run(jp_fetch, tmp_path):
    marker = tmp_path / "ran.txt"
    job = await post_job(jp_fetch, {"action": code(writes(marker)), "target": HEADLESS}, 201)
    await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/trigger", expect=201)
    run = await finished_run(jp_fetch, job["id"])
    assert run["status"] == "failed"
    assert "Authorizer failed (RuntimeError: the policy service is down)" in run["error"]
    assert not marker.exists()


# --- watchers ------------------------------------------------------------------------------------


async def test_watchers_need_the_permissions_of_their_checks(jp_fetch):
    read = {"tool": "filesystem.read", "params": {"path": "w.txt"}, "interval": 3600}
    in_kernel = {"tool": "mymod.check", "interval": 3600, "target": LIVE}
    Refusals.current = {CONTENTS_READ}
    refused = await call(jp_fetch, "POST", "api/recall/watchers", read, expect=403)
    assert_refused(refused, CONTENTS_READ)
    assert "resource: contents. The tool filesystem.read reads a file" in refused["message"]
    Refusals.current = {KERNELS_EXECUTE}
    refused = await call(jp_fetch, "POST", "api/recall/watchers", in_kernel, expect=403)
    assert_refused(refused, KERNELS_EXECUTE)
    reason = "kernels. A watcher of mymod.check runs each check in the notebook's kernel"
    assert reason in refused["message"]
    assert await job_ids(jp_fetch) == []
    # Each refused one needs nothing else: with everything else refused, both are created.
    Refusals.current = EVERY_PERMISSION - {CONTENTS_READ, KERNELS_EXECUTE}
    await call(jp_fetch, "POST", "api/recall/watchers", read, expect=201)
    await call(jp_fetch, "POST", "api/recall/watchers", in_kernel, expect=201)


async def test_a_watchers_checks_stop_when_its_permission_is_revoked(jp_fetch, jp_root_dir):
    (jp_root_dir / "w.txt").write_text("v1")
    body = {"tool": "filesystem.read", "params": {"path": "w.txt"}, "interval": 5}
    watcher = await call(jp_fetch, "POST", "api/recall/watchers", body, expect=201)
    first = await finished_run(jp_fetch, watcher["watcher_id"])
    assert first["status"] == "succeeded", first
    Refusals.current = {CONTENTS_READ}
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        runs = (await call(jp_fetch, "GET", f"api/recall/jobs/{watcher['watcher_id']}/runs"))[
            "runs"
        ]
        refused = [run for run in runs if run["status"] == "failed"]
        if refused:
            break
        assert asyncio.get_running_loop().time() < deadline, runs
        await asyncio.sleep(0.5)
    assert "is not authorized to read on resource: contents" in refused[0]["error"]
    assert "the tool filesystem.read reads a file" in refused[0]["error"]


# --- users named by the identity provider (as on JupyterHub) -------------------------------------

ROLES: dict[str, set[str]] = {}


@dataclass
class RoleUser(User):
    """A user with roles, as JupyterHub's users carry scopes: Authorizers read them."""

    roles: set[str] = field(default_factory=set)


class HeaderIdentityProvider(IdentityProvider):
    """The token still authenticates; the ``X-Test-User`` header (default alice) names who."""

    async def get_user(self, handler: Any) -> User | None:
        if await ensure_async(super().get_user(handler)) is None:
            return None
        name = handler.request.headers.get("X-Test-User", "alice")
        return RoleUser(username=name, roles=ROLES[name])


class RoleAuthorizer(Authorizer):
    """Kernels and sessions only for users with the 'kernels' role."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return resource not in ("kernels", "sessions") or "kernels" in user.roles


@pytest.fixture
def named_users(jp_server_config: Config) -> Config:
    ROLES.clear()
    ROLES.update(alice={"kernels"}, bob=set())
    jp_server_config.ServerApp.identity_provider_class = HeaderIdentityProvider
    return jp_server_config


@pytest.mark.parametrize("authorizer_class", [RoleAuthorizer])
async def test_each_run_is_asked_for_its_own_owner(named_users, jp_fetch, tmp_path):
    marker = tmp_path / "ran.txt"
    body = {"when": "in 2s", "action": code(writes(marker)), "target": HEADLESS}
    as_bob = await jp_fetch(
        "api/recall/jobs",
        method="POST",
        body=json.dumps(body),
        headers={"X-Test-User": "bob"},
        raise_error=False,
    )
    assert as_bob.code == 403
    assert json.loads(as_bob.body)["permission"] == {"action": "write", "resource": "kernels"}
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert job["owner"] == "alice"
    # Alice loses the role on the User object her provider gave: her run is refused.
    ROLES["alice"].discard("kernels")
    run = await finished_run(jp_fetch, job["id"])
    assert run["status"] == "failed", run
    assert "user 'alice' is not authorized to write on resource: kernels" in run["error"]
    assert not marker.exists()


# --- the kernel's and the CLI's client ------------------------------------------------------------


async def test_the_client_reports_the_permission_not_the_token(jp_serverapp, jp_fetch):
    server = ServerInfo(jp_serverapp.connection_url, jp_serverapp.identity_provider.token, "test")
    client = Client(server, timeout=30)
    Refusals.current = {KERNELS_WRITE}
    body = {"when": "in 1h", "action": code(), "target": HEADLESS}
    with pytest.raises(PermissionDeniedError) as refused:
        # The client is synchronous; the server answers on this test's event loop.
        await asyncio.to_thread(client.request, "POST", "/api/recall/jobs", body=body)
    assert (refused.value.action, refused.value.resource) == KERNELS_WRITE
    assert str(refused.value).startswith("User is not authorized to write on resource: kernels.")


async def test_pruning_runs_is_a_write_on_recall_and_needs_nothing_else(jp_fetch):
    # The runs deleted are the caller's own: no kernel, session or contents permission.
    Refusals.current = set(NO_KERNELS)
    answer = await call(jp_fetch, "POST", "api/recall/runs/prune", {"dry_run": True})
    assert answer == {"dry_run": True, "runs": 0, "jobs": {}}
    assert ("write", "recall") in {(action, resource) for *_, action, resource in Refusals.calls}
    Refusals.current = {("write", "recall")}
    await call(jp_fetch, "POST", "api/recall/runs/prune", {}, expect=403)
