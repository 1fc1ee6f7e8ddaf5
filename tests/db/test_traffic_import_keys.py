"""The daily-rollups migration gives imported rows' keys their time prefix, and takes it back."""

from __future__ import annotations

from datetime import UTC, datetime

from alembic import command
from sqlalchemy import text

from alertstation.db import make_engine
from alertstation.db.migrate import alembic_config

BEFORE = "20261124_audio_archive"
REVISION = "20261124_traffic_daily_rollups"
OLD_KEY = "469c824b4c588e0965c1cae7f8ce2390afcd05a9d8d614d3:2"
INSERT = text(
    "INSERT INTO web_request_logs (occurred_at, ts, hour, method, path, status, client_ip, "
    "ip_version, visitor_key, authenticated, page_view, is_bot, source, import_key) VALUES "
    "(:at, :ts, :hour, 'GET', '/', 200, '192.0.2.1', 4, '192.0.2.1', false, true, false, "
    ":source, :key)"
)


def test_existing_import_keys_get_the_time_prefix_and_lose_it_on_downgrade(
    empty_database: str,
) -> None:
    engine = make_engine(empty_database)
    config = alembic_config(engine)
    ts = 1_792_918_806.75
    try:
        command.upgrade(config, BEFORE)
        with engine.begin() as conn:
            for key, source in ((OLD_KEY, "import"), (None, "live")):
                moment = datetime.fromtimestamp(ts, UTC).replace(tzinfo=None)
                values = {"at": moment, "ts": ts, "hour": int(ts // 3600)}
                conn.execute(INSERT, {**values, "source": source, "key": key})
        command.upgrade(config, REVISION)
        with engine.connect() as conn:
            keys = list(conn.execute(text("SELECT import_key FROM web_request_logs")).scalars())
        assert sorted(keys, key=str) == sorted([f"{int(ts):010x}-{OLD_KEY}", None], key=str)
        command.upgrade(config, REVISION)  # already there: nothing changes twice
        command.downgrade(config, BEFORE)
        with engine.connect() as conn:
            keys = list(conn.execute(text("SELECT import_key FROM web_request_logs")).scalars())
        assert sorted(keys, key=str) == sorted([OLD_KEY, None], key=str)
    finally:
        engine.dispose()
