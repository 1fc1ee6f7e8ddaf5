"""The saved forwarding rule book: read it, save a checked one (one row of JSON)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Connection, select

from alertstation.eas.forward.rules import RuleBook, read_book
from alertstation.eas.forward.tables import eas_forward_rules

ROW = 1


def get_rule_book(conn: Connection) -> RuleBook:
    """Return the saved rule book; no rules and the default ``manual`` when none was saved."""
    text = conn.execute(
        select(eas_forward_rules.c.book).where(eas_forward_rules.c.id == ROW)
    ).scalar()
    if text is None:
        return RuleBook()
    return read_book(orjson.loads(text))


def save_rule_book(conn: Connection, body: Any, *, by: str | None, now: datetime) -> RuleBook:
    """Check and save a rule book inside the caller's write transaction; 422 when invalid."""
    book = read_book(body)
    values = {"book": orjson.dumps(book.as_dict()).decode(), "updated_by": by, "updated_at": now}
    done = conn.execute(
        eas_forward_rules.update().where(eas_forward_rules.c.id == ROW).values(**values)
    ).rowcount
    if not done:
        conn.execute(eas_forward_rules.insert().values(id=ROW, **values))
    return book


def rules_saved(conn: Connection) -> bool:
    """Tell whether the station's rules were ever saved (or carried over by an upgrade)."""
    return conn.execute(select(eas_forward_rules.c.id)).first() is not None
