"""Policies: most specific key within a layer, strictest across layers, named sources."""

from __future__ import annotations

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.tools.policy import PolicyLayer, check_policies, decide

SERVER = PolicyLayer("server config RecallApp.tool_policies", {"shell": "block", "http": "approve"})


@pytest.mark.parametrize(
    ("layer", "name", "policy", "source"),
    [
        ({"shell": "block", "shell.run": "auto"}, "shell.run", "auto", "['shell.run']"),
        ({"shell": "block", "shell.run": "auto"}, "shell.other", "block", "['shell']"),
        ({"*": "approve", "http": "auto"}, "http.get", "auto", "['http']"),
        ({"*": "approve", "http": "auto"}, "filesystem.read", "approve", "['*']"),
    ],
)
def test_most_specific_key_wins_within_a_layer(layer, name, policy, source):
    decision = decide(name, [PolicyLayer("cfg", layer)])
    assert (decision.policy, decision.source) == (policy, "cfg" + source)


def test_no_policy_is_auto():
    decision = decide("filesystem.read", [SERVER])
    assert decision.policy == "auto"
    assert decision.source == "the default policy (no policy names it)"


@pytest.mark.parametrize(
    ("kernel", "name", "policy", "source"),
    [
        # The kernel may tighten...
        ({"filesystem": "block"}, "filesystem.read", "block", "kernel['filesystem']"),
        ({"http.get": "block"}, "http.get", "block", "kernel['http.get']"),
        # ...but never loosen: the server's stricter policy stays.
        ({"shell.run": "auto"}, "shell.run", "block", SERVER.label + "['shell']"),
        ({"http.get": "auto"}, "http.get", "approve", SERVER.label + "['http']"),
        # A tie names the first layer (the server).
        ({"shell": "block"}, "shell.run", "block", SERVER.label + "['shell']"),
    ],
)
def test_the_stricter_layer_wins(kernel, name, policy, source):
    decision = decide(name, [SERVER, PolicyLayer("kernel", kernel)])
    assert (decision.policy, decision.source) == (policy, source)


def test_label_with_a_key_placeholder():
    layer = PolicyLayer("jupyter_recall.set_tool_policy({key}, ...)", {"shell": "block"})
    assert decide("shell.run", [layer]).refusal() == (
        "tool shell.run is blocked by jupyter_recall.set_tool_policy('shell', ...) (policy: block)"
    )


def test_bad_policies_name_the_key_and_the_accepted_values():
    with pytest.raises(ValidationError, match=r"policies\.shell: unknown policy 'ask'") as info:
        check_policies({"shell": "ask"})
    assert info.value.accepted == ("auto", "approve", "block")
    with pytest.raises(ValidationError, match="must be '\\*', a module"):
        check_policies({"a.b.c": "auto"})


def test_server_config_refuses_bad_keys_and_policies():
    from traitlets import TraitError

    from jupyter_recall.server.app import RecallApp

    app = RecallApp()
    with pytest.raises(TraitError, match="must be '\\*', a module"):
        app.tool_policies = {"shell.run.now": "auto"}
    with pytest.raises(
        TraitError, match=r"unknown policy 'ask' \(accepted: auto, approve, block\)"
    ):
        app.tool_policies = {"shell": "ask"}
    app.tool_policies = {"*": "approve", "http.get": "auto"}
    assert app.tool_policies == {"*": "approve", "http.get": "auto"}
