"""Real JupyterLab with the extension, and Debian's chromium driven by Playwright.

Lab runs in a process of its own with private settings, workspaces and runtime directories (its
kernels find it through ``jpserver-<pid>.json`` there, as on a desktop). The browser is the
system's ``/usr/bin/chromium``: Playwright never downloads one here. Screenshots go to
``artifacts/ui/`` at the top of the repository (gitignored).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.server.live_server import TOKEN, answers, free_port

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "ui"
# The JupyterLab extension as `jlpm build:prod` in labextension/ leaves it (absent until built).
LABEXTENSION = Path(__file__).resolve().parents[2] / "jupyter_recall" / "labextension"
NEEDS_LABEXTENSION = [
    pytest.mark.ui,
    pytest.mark.slow,
    pytest.mark.skipif(
        not (LABEXTENSION / "package.json").exists(),
        reason="the lab extension is not built (jlpm build:prod in labextension/)",
    ),
]
"""The marks of the tests that drive the lab extension in a browser."""
SETTINGS = {
    # No news prompt over the notebook.
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}

for _name in ("JUPYTER_RECALL_URL", "JUPYTER_RECALL_TOKEN"):
    os.environ.pop(_name, None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason=f"{CHROMIUM} is absent (apt-get install chromium)")
    for item in items:
        if item.get_closest_marker("ui") and not CHROMIUM.exists():
            item.add_marker(skip)


@dataclass
class Lab:
    """A running JupyterLab (or Notebook 7: ``app`` is the module that serves it)."""

    url: str
    root: Path
    log: Path
    app: str = "jupyterlab"

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path,
            data=data if data is not None or method == "GET" else b"{}",
            method=method,
            headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
        return json.loads(text) if text else None

    def pending_recall(
        self, path: str, name: str, *, when: str = "in 1h", instruction: str = "look again"
    ) -> Any:
        """Create a recall of the notebook at ``path`` (what its banner shows); the job."""
        body = {
            "when": when,
            "kind": "recall",
            "name": name,
            "action": {"type": "instruction", "instruction": instruction},
            "target": {"type": "kernel", "path": path},
        }
        return self.request("POST", "/api/recall/jobs", body)

    def notebook(self, name: str, *sources: str) -> str:
        """Write a notebook of code cells (python3 kernel); its URL in Lab."""
        notebook = nbformat.v4.new_notebook()
        notebook.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
        }
        notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
        nbformat.write(notebook, self.root / name)
        if self.app == "notebook":
            return f"{self.url}/notebooks/{name}?token={TOKEN}"
        return f"{self.url}/lab/tree/{name}?reset&token={TOKEN}"


def _write_settings(directory: Path) -> None:
    for relative, values in SETTINGS.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def labextension_env(base: Path) -> dict[str, str]:
    """A data directory holding the built extension, as a wheel installs it
    (``share/jupyter/labextensions/jupyter-recall``); none when it is not built."""
    if not (LABEXTENSION / "package.json").exists():
        return {}
    data = base / "jupyter-data"
    (data / "labextensions").mkdir(parents=True, exist_ok=True)
    link = data / "labextensions" / "jupyter-recall"
    if not link.exists():
        link.symlink_to(LABEXTENSION, target_is_directory=True)
    paths = [str(data), os.environ.get("JUPYTER_PATH", "")]
    return {"JUPYTER_PATH": os.pathsep.join(path for path in paths if path)}


def _probe(lab: Lab, recall: bool) -> None:
    if recall:
        lab.request("GET", "/api/recall/info")
    lab.request("GET", "/lab/api/settings")


def _wait_ready(
    lab: Lab, process: subprocess.Popen[bytes], recall: bool, timeout: float = 90.0
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        if answers(partial(_probe, lab, recall)):
            return
        time.sleep(0.3)
    raise AssertionError(f"{lab.app} did not start:\n{lab.log.read_text()[-3000:]}")


def _serve(base: Path, app: str, *args: str, recall: bool = True) -> Iterator[Lab]:
    """Runs ``python -m <app>`` (``jupyterlab`` or ``notebook``, both LabServerApps: one
    config class name each) with the extension until the session ends; ``recall``: wait for
    the server extension to answer too."""
    root, runtime, settings = base / "root", base / "runtime", base / "settings"
    for directory in (root, runtime, settings, base / "workspaces"):
        directory.mkdir()
    _write_settings(settings)
    port = free_port()
    config_class = {"jupyterlab": "LabApp", "notebook": "JupyterNotebookApp"}[app]
    command = [
        sys.executable,
        "-m",
        app,
        "--no-browser",
        "--allow-root",
        f"--port={port}",
        "--ip=127.0.0.1",
        f"--ServerApp.token={TOKEN}",
        f"--ServerApp.root_dir={root}",
        f"--RecallApp.db_path={base / 'recall.sqlite'}",
        "--RecallApp.default_timezone=UTC",
        # Enabled here, not through the installed config file: an editable install may lack it.
        "--ServerApp.jpserver_extensions=jupyter_recall=True",
        f"--{config_class}.user_settings_dir={settings}",
        f"--{config_class}.workspaces_dir={base / 'workspaces'}",
        # window.jupyterapp, as Galata has it: tests wait for its layout to be restored.
        f"--{config_class}.expose_app_in_browser=True",
        *args,
    ]
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1", "JUPYTER_RUNTIME_DIR": str(runtime)}
    env.update(labextension_env(base))
    log = base / f"{app}.log"
    lab = Lab(f"http://127.0.0.1:{port}", root, log, app)
    with log.open("ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=out, env=env)
    try:
        _wait_ready(lab, process, recall)
        yield lab
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    yield from _serve(tmp_path_factory.mktemp("recall-lab"), "jupyterlab")


WITHOUT_RECALL_SERVER = {
    # The server extension disabled: the Lab extension is there, ``/api/recall`` is not.
    "disabled": "--ServerApp.jpserver_extensions=jupyter_recall=False",
    # A configuration jupyter_server refuses: ``/api/recall`` answers 503 naming the refusal.
    "refused": "--RecallApp.db_url=mysql://db/recall",
}


@pytest.fixture
def lab_without_recall_server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Lab]:
    """A JupyterLab whose server extension does not run, for the reason ``request.param``
    names in ``WITHOUT_RECALL_SERVER`` (parametrize indirectly)."""
    base = tmp_path_factory.mktemp("recall-lab-broken")
    yield from _serve(base, "jupyterlab", WITHOUT_RECALL_SERVER[request.param], recall=False)


@pytest.fixture(scope="session")
def notebook7(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """The same server as the Notebook 7 app (``/tree``, ``/notebooks/<path>``)."""
    yield from _serve(tmp_path_factory.mktemp("recall-notebook7"), "notebook")


def settle(page: Any) -> None:
    """Wait until JupyterLab has restored its layout and activated its main-area widget (the
    launcher, or the document the URL opens). That activation takes the keyboard focus about
    a second after ``restored``, later on a loaded machine: a form focused before it loses
    its focus, and the command palette closes."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.wait_for_function("() => window.jupyterapp !== undefined")
    page.evaluate("() => window.jupyterapp.restored.then(() => true)")

    # Notebook 7's pages have no dock panel: nothing there takes the focus late.
    main_area_focused = """() => {
        const main = document.querySelector('#jp-main-dock-panel');
        return !main || main.contains(document.activeElement);
    }"""
    # A main area with nothing to focus in it: nothing will take the focus either.
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(main_area_focused, timeout=15_000)


def open_sidebar(page: Any, url: str) -> Any:
    """Open ``url`` and the Recall sidebar; returns the sidebar's region."""
    from playwright.sync_api import expect

    page.goto(url)
    settle(page)
    tab = page.locator('.jp-SideBar [role="tab"][title="Recall: scheduled jobs"]')
    expect(tab).to_be_visible()
    tab.click()
    sidebar = page.get_by_role("region", name="Recall jobs")
    expect(sidebar).to_be_visible()
    return sidebar


def run_first_cell(page: Any, url: str) -> Any:
    """Open the notebook, wait for its kernel, run its first cell; the cell."""
    from playwright.sync_api import expect

    page.goto(url)
    # A key press before the kernel is wired up is lost: wait until the status bar says the
    # kernel is idle, and press again if the prompt still shows the cell was not sent.
    status = page.locator(".jp-StatusBar-Widget").get_by_text(re.compile(r"\|\s*Idle"))
    expect(status).to_be_visible()
    cell = page.locator(".jp-NotebookPanel:visible .jp-Cell").first
    prompt = cell.locator(".jp-InputPrompt")
    for _ in range(3):
        cell.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")
        try:
            expect(prompt).not_to_have_text(re.compile(r"\[ \]"), timeout=10_000)
            break
        except AssertionError:
            continue
    expect(prompt).to_have_text(re.compile(r"\[1\]"))
    return cell


def _delete_jobs(lab: Lab) -> None:
    # The listing answers a page at a time: the first page again until none is left.
    while jobs := lab.request("GET", "/api/recall/jobs?limit=1000")["jobs"]:
        for job in jobs:
            lab.request("DELETE", f"/api/recall/jobs/{job['id']}")


@pytest.fixture
def clean(lab: Lab) -> Iterator[Lab]:
    """JupyterLab, with the jobs a test made deleted after it."""
    yield lab
    _delete_jobs(lab)


@pytest.fixture
def clean_notebook7(notebook7: Lab) -> Iterator[Lab]:
    yield notebook7
    _delete_jobs(notebook7)


@pytest.fixture(autouse=True)
def jp_asyncio_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """pytest_jupyter's loop fixture takes the current loop and closes it after each test; here
    that would be Playwright's (its sync API runs one for the whole session)."""
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(autouse=True)
def jp_server_cleanup() -> None:
    """pytest_jupyter's cleanup of an in-process ServerApp: these tests have none (Lab is a
    process of its own), and running its loop inside Playwright's would fail."""


@pytest.fixture(scope="package")
def browser(lab: Lab) -> Iterator[Any]:
    """One browser for the UI tests, closed after the last of them: Playwright's sync API marks
    its event loop as the running one between calls, and tests with an event loop of their own
    that run after it in the same process (pytest-jupyter's) would find it there."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=60_000)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    report_browser_errors(page)
    yield page
    context.close()


def report_browser_errors(page: Any) -> None:
    """The page's uncaught errors and console errors, printed: pytest shows them with a
    failure (an exception in a redraw leaves the DOM as it was, and says so nowhere else)."""
    page.on("pageerror", lambda error: print(f"[browser] uncaught: {error}"))
    page.on(
        "console",
        lambda message: message.type == "error" and print(f"[browser] console: {message.text}"),
    )


@pytest.fixture
def gb_page(browser: Any) -> Iterator[Any]:
    """A page in British English in Paris: dates read '24 Nov 2026, 17:34' whatever the
    machine, and times must show in the browser's zone, not the server's UTC."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, locale="en-GB", timezone_id="Europe/Paris"
    )
    page = context.new_page()
    page.set_default_timeout(60_000)
    report_browser_errors(page)
    yield page
    context.close()


def screenshot_of(locator: Any, name: str) -> Path:
    """A screenshot of one element (the sidebar, a menu, a form) under artifacts/ui/: the small
    pictures docs/img/ takes."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    locator.screenshot(path=str(path))
    return path


@pytest.fixture
def screenshot(request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]) -> Any:
    """``screenshot(page, name)``: saved under artifacts/ui/, its path printed."""

    def take(page: Any, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        with capsys.disabled():
            print(f"\n[ui] screenshot of {request.node.name}: {path}")
        return path

    return take
