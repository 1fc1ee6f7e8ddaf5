"""Saved environment variables: describe them (secrets redacted) and change them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alertstation.errors import Forbidden, Invalid
from alertstation.settings import (
    EDITABLE_VARIABLES,
    ENV_FILE,
    VARIABLES,
    SettingsError,
    read_env_file,
    validate_variable,
    write_env_file,
)
from alertstation.zones.resolver import family_of


@dataclass(frozen=True)
class VariableState:
    """One editable variable as the settings page shows it."""

    name: str
    description: str
    secret: bool
    source: str  # "environment", "saved" or "default"
    value: str | None  # None for secrets and unset variables
    saved: bool
    overridden: bool  # saved, but the process environment wins
    admin_only: bool = False
    boundary: str = ""  # the trust boundary it moves, for admin-only variables

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form; secret values never appear."""
        return {
            "name": self.name,
            "description": self.description,
            "secret": self.secret,
            "source": self.source,
            "value": self.value,
            "is_set": self.source != "default",
            "saved": self.saved,
            "overridden_by_environment": self.overridden,
            "admin_only": self.admin_only,
            "boundary": self.boundary,
        }

    @property
    def warning(self) -> str:
        """Return the warning shown beside an admin-only variable, "" for the others."""
        return boundary_warning(self.name) if self.admin_only else ""


BOUNDARY_WARNING = "takes effect after restart; moves a trust boundary"


def boundary_warning(name: str) -> str:
    """Return the warning for saving the admin-only variable ``name``."""
    variable = EDITABLE_VARIABLES[name]
    return f"{name} {BOUNDARY_WARNING}: {variable.boundary}"


def boundary_variables(names: Iterable[str]) -> list[str]:
    """Return the sorted names among ``names`` that are admin-only (they move a trust boundary)."""
    variables = (EDITABLE_VARIABLES.get(name) for name in names)
    return sorted({v.name for v in variables if v is not None and v.admin_only})


def check_may_change(names: Iterable[str], *, is_admin: bool) -> None:
    """Raise Forbidden naming every admin-only variable in ``names`` unless the caller is admin."""
    refused = [] if is_admin else boundary_variables(names)
    if refused:
        listed = ", ".join(refused)
        raise Forbidden(
            f"only an admin may change {listed}: "
            + "; ".join(f"{name} moves {EDITABLE_VARIABLES[name].boundary}" for name in refused),
            code="admin_only_variable",
            variables=refused,
        )


def env_file_path(data_dir: Path) -> Path:
    """Return where saved variables live."""
    return data_dir / ENV_FILE


def describe_variables(data_dir: Path, process_env: Mapping[str, str]) -> list[VariableState]:
    """Describe every editable variable: where its value comes from, redacted when secret."""
    saved = read_env_file(env_file_path(data_dir))
    states = []
    for variable in VARIABLES:
        in_env = bool(process_env.get(variable.name))
        source = "environment" if in_env else "saved" if variable.name in saved else "default"
        value = process_env.get(variable.name) if in_env else saved.get(variable.name)
        states.append(
            VariableState(
                name=variable.name,
                description=variable.description,
                secret=variable.secret,
                source=source,
                value=None if variable.secret else value,
                saved=variable.name in saved,
                overridden=in_env and variable.name in saved,
                admin_only=variable.admin_only,
                boundary=variable.boundary,
            )
        )
    return states


def _check_zone_schema(value: str) -> None:
    """Raise SettingsError unless the DBF holds zones of a schema the zone reader knows."""
    try:
        family_of(value)
    except ValueError as ex:
        raise SettingsError(f"WX_ZONE_DBF_PATH: {ex}") from None


def save_variables(
    data_dir: Path, changes: Mapping[str, Any], *, is_admin: bool = False
) -> list[str]:
    """Apply ``{name: value or None}`` to the saved variables; return the names that changed.

    Every change is validated before anything is written, so a bad value changes nothing. A
    caller who is not an admin gets Forbidden, naming them, for any admin-only variable sent
    (even one that would not change), and nothing is written.
    """
    if not changes:
        raise Invalid("no variables given")
    check_may_change(changes, is_admin=is_admin)
    path = env_file_path(data_dir)
    saved = read_env_file(path)
    updated = dict(saved)
    problems: list[tuple[str, str]] = []
    for name, value in changes.items():
        if value is None:
            updated.pop(name, None)
            continue
        try:
            updated[name] = validate_variable(name, value)
            if name == "WX_ZONE_DBF_PATH":
                _check_zone_schema(updated[name])
        except SettingsError as ex:
            problems.append((name, str(ex)))
    if problems:
        raise Invalid(
            "; ".join(message for _, message in problems),
            code="invalid_variables",
            problems=[message for _, message in problems],
            field=problems[0][0],
            errors=[{"field": name, "message": message} for name, message in problems],
        )
    changed = sorted(
        name for name in set(saved) | set(updated) if saved.get(name) != updated.get(name)
    )
    if changed:
        write_env_file(path, updated)
    return changed
