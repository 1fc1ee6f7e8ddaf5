"""Pick the DBF file of each zone family: explicit path, then WX_ZONE_DBF_PATH, then assets.

Families are ``public`` (z_*), ``marine`` (mz*, else oz*), ``fire`` (fz_*) and ``partial`` (cs*).
For each family the first of these wins:

1. an explicit path given by the caller (a ``--dbf-path`` option, an upload);
2. the file named by ``WX_ZONE_DBF_PATH`` (passed in from ``Settings.wx_zone_dbf_path``), for the
   family that file belongs to;
3. the newest file of the family in the assets directory, judged by the DDmmYY date stamp in its
   name (``z_18mr25`` is 18 March 2025); names without a readable stamp lose to stamped ones and
   are ordered by name among themselves.

A file's family comes from its name prefix; a name with no known prefix is decided by reading its
column names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date
from pathlib import Path

from alertstation.settings import Settings
from alertstation.zones.loader import FAMILIES, detect_family, family_from_name

# The agency's two-letter month abbreviations, as in z_03ja25, mz20fe25, z_18mr25, cs16ap26.
MONTHS = {
    "ja": 1,
    "fe": 2,
    "mr": 3,
    "ap": 4,
    "my": 5,
    "jn": 6,
    "jl": 7,
    "au": 8,
    "se": 9,
    "oc": 10,
    "no": 11,
    "de": 12,
}
_STAMP = re.compile(r"(\d{2})([a-z]{2})(\d{2})$")
# Within the marine family the coastal file (mz) is preferred over an offshore-only one (oz).
_PREFIX_RANK = {"oz": 0, "mz": 1}

Explicit = Path | str | Mapping[str, Path | str] | Iterable[Path | str] | None


def date_stamp(name: str) -> date | None:
    """Return the date a DDmmYY stamp at the end of a file stem names, None when there is none."""
    match = _STAMP.search(Path(name).stem.lower())
    if not match:
        return None
    day, month, year = int(match.group(1)), MONTHS.get(match.group(2)), int(match.group(3))
    if month is None:
        return None
    try:
        return date(2000 + year, month, day)
    except ValueError:
        return None


def family_of(path: Path | str) -> str:
    """Return the family of a DBF: by its name prefix, else by reading its columns."""
    family = family_from_name(Path(path).name)
    return family if family is not None else detect_family(path)


def newest(paths: Iterable[Path]) -> Path | None:
    """Return the newest file by date stamp; stamped beat unstamped, which go by name order.

    Among marine files a coastal ``mz`` file always beats an offshore-only ``oz`` file: the
    coastal file already carries the offshore zones.
    """

    def key(path: Path) -> tuple[int, int, date, str]:
        stamp = date_stamp(path.name)
        rank = _PREFIX_RANK.get(path.name.lower()[:2], 0)
        return (rank, 1 if stamp else 0, stamp or date.min, path.name)

    candidates = sorted(paths, key=key)
    return candidates[-1] if candidates else None


def scan_assets(assets_dir: Path) -> dict[str, Path]:
    """Return the newest DBF of each family in ``assets_dir`` (families without one left out)."""
    if not assets_dir.is_dir():
        return {}
    by_family: dict[str, list[Path]] = {}
    for path in assets_dir.iterdir():
        if path.suffix.lower() != ".dbf" or not path.is_file():
            continue
        family = family_from_name(path.name)
        if family is not None:
            by_family.setdefault(family, []).append(path)
    chosen = {family: newest(paths) for family, paths in by_family.items()}
    return {family: path for family, path in chosen.items() if path is not None}


def resolve_dbf_paths(
    assets_dir: Path | str | None = None,
    explicit: Explicit = None,
    env_path: Path | str | None = None,
) -> dict[str, Path]:
    """Return the DBF each family should load from, in the order public, marine, fire, partial.

    ``explicit`` may be one path, several paths, or a mapping family → path. ``env_path`` is the
    value of ``WX_ZONE_DBF_PATH`` (callers pass ``settings.wx_zone_dbf_path``). ``assets_dir``
    defaults to the configured assets directory.
    """
    if assets_dir is None:
        assets_dir = Settings.from_env().assets_dir
    resolved = scan_assets(Path(assets_dir))
    if env_path:
        env = Path(env_path)
        resolved[family_of(env)] = env
    resolved.update(explicit_paths(explicit))
    return {family: resolved[family] for family in FAMILIES if family in resolved}


def explicit_paths(explicit: Explicit) -> dict[str, Path]:
    """Normalise the ``explicit`` argument to a mapping family → path."""
    if explicit is None:
        return {}
    if isinstance(explicit, Mapping):
        paths = {str(family): Path(path) for family, path in explicit.items()}
        unknown = sorted(set(paths) - set(FAMILIES))
        if unknown:
            raise ValueError(
                f"unknown zone famil{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown)}; "
                f"expected one of {', '.join(FAMILIES)}"
            )
        return paths
    items = [explicit] if isinstance(explicit, str | Path) else list(explicit)
    paths: dict[str, Path] = {}
    for item in items:
        path = Path(item)
        family = family_of(path)
        if family in paths:
            raise ValueError(
                f"two {family} files given ({paths[family].name} and {path.name}); give one"
            )
        paths[family] = path
    return paths
