"""Test-wide fixtures. pytest-jupyter's server fixtures must be declared here, at the root."""

from __future__ import annotations

import pytest
from traitlets.config import Config

pytest_plugins = ["pytest_jupyter.jupyter_server"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def recall_config(tmp_path) -> dict:
    """Per-test settings of the extension; tests may update it before the server starts."""
    return {
        "db_path": str(tmp_path / "recall.sqlite"),
        "default_timezone": "UTC",
        "sse_heartbeat": 0.5,
    }


@pytest.fixture
def jp_server_config(recall_config) -> Config:
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {"jupyter_recall": True},
                "allow_root": True,
            },
            "RecallApp": recall_config,
        }
    )


@pytest.fixture
def jp_serverapp(jp_serverapp, jp_asyncio_loop):
    """pytest-jupyter never runs the server's post-start hook; a real server does, and that is
    where extensions start their background work (our scheduler loop). Run it here."""
    jp_asyncio_loop.run_until_complete(jp_serverapp.extension_manager.start_all_extensions())
    return jp_serverapp
