"""Normalise and check UGC zone codes typed by operators or read from configuration.

``validate_zone_codes`` only looks at the form of each token: a code is valid when, after
upper-casing, removing whitespace and hyphens and turning ``<ST>###`` into ``<ST>Z###``, it matches
``^[A-Z]{2}Z\\d{3}$``, whether or not the catalog holds it. ``split_known`` then sorts valid codes
into those the catalog knows and those it does not; unknown codes are kept and reported, never
rejected, so marine codes can be configured before the marine file is loaded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, select

from alertstation.zones.tables import wx_zones

CODE_PATTERN = re.compile(r"^[A-Z]{2}Z\d{3}$")
_SHORT_FORM = re.compile(r"^([A-Z]{2})(\d{3})$")
_REMOVED = re.compile(r"[\s\-]+")
_SEPARATORS = re.compile(r"[\s,]+")
_QUERY_CHUNK = 500


def normalise_zone_code(token: str) -> str:
    """Upper-case a token, drop whitespace and hyphens, and turn ``ST###`` into ``STZ###``."""
    code = _REMOVED.sub("", token.upper())
    short = _SHORT_FORM.match(code)
    return f"{short.group(1)}Z{short.group(2)}" if short else code


def validate_zone_codes(text_or_iterable: str | Iterable[str]) -> tuple[list[str], list[str]]:
    """Split input into (valid codes, invalid tokens), keeping first-seen order, no duplicates.

    A string is split on commas, whitespace and newlines; each item of any other iterable is one
    token. Invalid tokens are returned as given (stripped), so they can be shown back.
    """
    if isinstance(text_or_iterable, str):
        tokens: Iterable[str] = _SEPARATORS.split(text_or_iterable)
    else:
        tokens = (str(item) for item in text_or_iterable)
    valid: dict[str, None] = {}
    invalid: dict[str, None] = {}
    for token in tokens:
        code = normalise_zone_code(token)
        if not code:
            continue
        if CODE_PATTERN.match(code):
            valid.setdefault(code, None)
        else:
            invalid.setdefault(token.strip(), None)
    return list(valid), list(invalid)


def split_known(
    conn_or_catalog: Connection | Any, valid: Sequence[str]
) -> tuple[list[str], list[str]]:
    """Split valid codes into (known, unknown) against the catalog, keeping their order.

    ``conn_or_catalog`` is an open connection (one query per 500 codes) or a ZoneCatalog (answers
    from memory). A code is known when any family (public, marine, fire) holds it.
    """
    if isinstance(conn_or_catalog, Connection):
        present = _codes_in_table(conn_or_catalog, valid)
    else:
        present = {code for code in valid if conn_or_catalog.lookup(code) is not None}
    known = [code for code in valid if code in present]
    unknown = [code for code in valid if code not in present]
    return known, unknown


def _codes_in_table(conn: Connection, codes: Sequence[str]) -> set[str]:
    distinct = list(dict.fromkeys(codes))
    present: set[str] = set()
    for start in range(0, len(distinct), _QUERY_CHUNK):
        chunk = distinct[start : start + _QUERY_CHUNK]
        query = select(wx_zones.c.zone_code).where(wx_zones.c.zone_code.in_(chunk)).distinct()
        present.update(conn.execute(query).scalars())
    return present
