"""What a ``config.updated`` row says a save changed: old → new values, never a secret's.

The one home of the rule. :func:`config_changes` compares two settings snapshots (plain
mappings of field → value) and returns, for each changed field that is not a secret:

* ``{"old": ..., "new": ...}`` for a single value;
* ``{"added": [...], "removed": [...]}`` for a list (codes, sources, rules): only what
  came and went, not both whole lists.

A secret is a field named in ``secrets`` or whose name says it is one (:data:`SECRET_NAME`:
password, secret, token, API key, private key, credential, auth, cookie); it stays a name in
``fields`` only. Callers hand over the snapshots their responses show, which carry a secret as
a ``*_set`` flag at most, so a secret is kept out twice. A value whose JSON is longer
than :data:`MAX_VALUE_CHARS` is recorded as ``{"changed": true}`` so an audit row stays small.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any, Final

import orjson

#: Field names that are secrets whatever the caller says.
SECRET_NAME: Final[re.Pattern[str]] = re.compile(
    r"(password|secret|token|api_?key|private|credential|auth|cookie)", re.IGNORECASE
)
#: Names the pattern would take for secrets that are not: the password policy's settings.
NOT_SECRET: Final[frozenset[str]] = frozenset({"password_min_length", "password_refuse_username"})
#: The longest value (as JSON) recorded; a longer one reads ``{"changed": true}``.
MAX_VALUE_CHARS: Final[int] = 500


def is_secret(name: str, secrets: Iterable[str] = ()) -> bool:
    """Tell whether a field's value must never be recorded."""
    if name in set(secrets):
        return True
    return name not in NOT_SECRET and SECRET_NAME.search(name) is not None


def _plain(value: Any) -> Any:
    """Return a JSON-able form of a settings value (tuples as lists, moments as ISO text)."""
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_plain(v) for v in value]
        return sorted(items, key=str) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _key(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _fits(value: Any) -> bool:
    return len(_key(value)) <= MAX_VALUE_CHARS


def _flatten(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """Return a snapshot with each nested field also under its dotted name (``flood.ban``)."""
    flat = dict(snapshot)
    for name, value in snapshot.items():
        if isinstance(value, Mapping):
            for inner, item in _flatten(value).items():
                flat[f"{name}.{inner}"] = item
    return flat


def config_changes(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    *,
    names: Iterable[str] | None = None,
    secrets: Iterable[str] = (),
) -> dict[str, Any]:
    """Return field → change for the changed, non-secret fields of two snapshots.

    ``names`` limits the result to those fields (the names the save reports as changed; a
    nested field by its dotted name, ``flood.threshold``); a field missing from one side reads
    as null there.
    """
    secret_names = set(secrets)
    before, after = _flatten(before), _flatten(after)
    wanted = set(before) | set(after) if names is None else {str(n) for n in names}
    changes: dict[str, Any] = {}
    for name in sorted(wanted):
        if is_secret(name, secret_names) or (name not in before and name not in after):
            continue
        old, new = _plain(before.get(name)), _plain(after.get(name))
        if old == new:
            continue
        if isinstance(old, list) and isinstance(new, list):
            old_keys, new_keys = {_key(v) for v in old}, {_key(v) for v in new}
            change: dict[str, Any] = {
                "added": [v for v in new if _key(v) not in old_keys],
                "removed": [v for v in old if _key(v) not in new_keys],
            }
            if not change["added"] and not change["removed"]:
                change = {"reordered": True}
        else:
            change = {"old": old, "new": new}
        changes[name] = change if _fits(change) else {"changed": True}
    return changes
