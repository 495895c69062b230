"""Tool policies: ``auto`` (run), ``approve`` (ask the person first) or ``block`` (refuse).

Policies come in layers (the server's ``RecallApp.tool_policies``, the kernel's own settings).
Within one layer the most specific key wins (``shell.run`` over ``shell`` over ``*``); across
layers the strictest decision wins (block > approve > auto), so a kernel can tighten what the
server allows and never loosen it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from jupyter_recall.core.errors import ValidationError

AUTO = "auto"
APPROVE = "approve"
BLOCK = "block"
POLICIES = (AUTO, APPROVE, BLOCK)
STRICTNESS = {AUTO: 0, APPROVE: 1, BLOCK: 2}
DEFAULT_KEY = "*"
DEFAULT_POLICY = AUTO


def check_policy(value: object, field_name: str = "policy") -> str:
    if value not in POLICIES:
        raise ValidationError(field_name, f"unknown policy {value!r}", accepted=POLICIES)
    return str(value)


def check_key(key: object, field_name: str = "name") -> str:
    """A policy key: ``*``, a module (``shell``) or a tool (``shell.run``)."""
    if not isinstance(key, str) or not key:
        raise ValidationError(field_name, f"must be a tool module or module.action, got {key!r}")
    if key == DEFAULT_KEY:
        return key
    parts = key.split(".")
    if len(parts) > 2 or not all(part.isidentifier() for part in parts):
        raise ValidationError(
            field_name, f"must be '*', a module ('shell') or 'module.action', got {key!r}"
        )
    return key


def check_policies(mapping: Mapping[str, object], field_name: str = "policies") -> dict[str, str]:
    if not isinstance(mapping, Mapping):
        raise ValidationError(field_name, f"must be an object, got {type(mapping).__name__}")
    return {
        check_key(key, f"{field_name}.{key}"): check_policy(value, f"{field_name}.{key}")
        for key, value in mapping.items()
    }


@dataclass(frozen=True)
class PolicyLayer:
    """One source of policies, with the label errors name (``server config
    RecallApp.tool_policies``)."""

    label: str
    """Names the source; ``{key}`` in it is replaced by the matching key (repr), else the key
    is appended as ``[key]``."""
    policies: Mapping[str, str] = field(default_factory=dict)

    def source(self, key: str) -> str:
        if "{key}" in self.label:
            return self.label.replace("{key}", repr(key))
        return f"{self.label}[{key!r}]"

    def match(self, name: str) -> tuple[str, str] | None:
        """(key, policy) of the most specific key for ``name``, or None."""
        module = name.partition(".")[0]
        for key in (name, module, DEFAULT_KEY):
            if key in self.policies:
                return key, self.policies[key]
        return None


@dataclass(frozen=True)
class Decision:
    name: str
    policy: str
    source: str
    """Where the policy comes from, e.g. ``server config RecallApp.tool_policies['shell']``."""

    def refusal(self) -> str:
        return f"tool {self.name} is blocked by {self.source} (policy: {self.policy})"


def decide(name: str, layers: Iterable[PolicyLayer]) -> Decision:
    """The strictest policy any layer gives ``name``; on a tie the first layer is named.
    ``auto`` when no layer names it."""
    best: Decision | None = None
    for layer in layers:
        found = layer.match(name)
        if found is None:
            continue
        key, policy = found
        if best is None or STRICTNESS[policy] > STRICTNESS[best.policy]:
            best = Decision(name, policy, layer.source(key))
    return best or Decision(name, DEFAULT_POLICY, "the default policy (no policy names it)")
