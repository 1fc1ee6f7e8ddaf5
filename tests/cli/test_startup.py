"""What a command loads before it does anything: never the heavy modules it does not use.

Each check runs in a fresh interpreter (``sys.modules`` of the test process holds everything).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from alertstation.db.engine import make_engine
from alertstation.db.migrate import (
    current_revision,
    head_revision,
    is_at_head,
    shipped_head,
    shipped_heads,
)

HEAVY = ("scipy", "fpdf", "lxml", "shapely", "apprise")


def loaded_after(code: str) -> set[str]:
    """Run ``code`` in a fresh interpreter; return the top-level modules it has loaded."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True
    )
    names = json.loads(done.stdout.strip().splitlines()[-1])
    return {name.partition(".")[0] for name in names} | set(names)


def test_importing_the_command_line_loads_no_heavy_module() -> None:
    loaded = loaded_after("import alertstation.cli")
    assert [name for name in HEAVY if name in loaded] == []


def test_the_command_line_loads_the_decoder_only_when_decode_runs(tmp_path: Path) -> None:
    loaded = loaded_after("import alertstation.cli")
    assert [name for name in ("numpy", "alertstation.eas.decode") if name in loaded] == []
    code = (
        "from alertstation.cli import main\n"
        "try:\n"
        f"    main(['eas', 'decode', {str(tmp_path / 'missing.wav')!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
    )
    loaded = loaded_after(code)
    assert {"numpy", "alertstation.eas.decode"} <= loaded


def test_version_and_help_load_neither_the_web_app_nor_migrations() -> None:
    for argv in (["version"], ["--help"]):
        code = (
            "from alertstation.cli import main\n"
            "try:\n"
            f"    main({argv!r})\n"
            "except SystemExit:\n"
            "    pass\n"
        )
        loaded = loaded_after(code)
        unwanted = [
            *HEAVY,
            "numpy",
            "urllib3",
            "tqdm",
            "alertstation.app",
            "falcon",
            "alembic",
            "jinja2",
        ]
        assert [name for name in unwanted if name in loaded] == [], argv


def test_the_web_app_loads_no_heavy_module_until_used() -> None:
    loaded = loaded_after("import alertstation.app")
    unwanted = [
        *HEAVY,
        "alembic",
        "ua_parser",
        "yaml",
        "markdown_it",
        "sqlalchemy.dialects.postgresql",
    ]
    assert [name for name in unwanted if name in loaded] == []


def test_the_worker_loads_neither_falcon_nor_jinja2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    code = (
        "import alertstation.background\n"
        "from alertstation.station import build_station\n"
        "from alertstation.settings import Settings\n"
        f"data = {str(data)!r}\n"
        "settings = Settings.from_env({'ALERTSTATION_DATA_DIR': data})\n"
        "build_station(settings).engine.dispose()\n"
    )
    loaded = loaded_after(code)
    unwanted = [*HEAVY, "falcon", "jinja2", "alembic", "sqlalchemy.dialects.postgresql"]
    # started by `run`'s supervisor as a program of its own: no command line modules
    unwanted += ["alertstation.cli", "alertstation.eas.cli", "alertstation.zones.cli"]
    assert [name for name in unwanted if name in loaded] == []


@pytest.fixture(scope="module")
def migrated_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a station on SQLite whose database is at head."""
    env = {**os.environ, "ALERTSTATION_DATA_DIR": str(tmp_path_factory.mktemp("st") / "data")}
    env.pop("DATABASE_URL", None)
    subprocess.run(
        [sys.executable, "-m", "alertstation", "migrate"], env=env, check=True, timeout=300
    )
    return env


def test_a_current_database_is_checked_without_loading_alembic(
    migrated_env: dict[str, str],
) -> None:
    env = migrated_env
    probe = (
        "import sys, json\n"
        "from alertstation.commands import open_database\n"
        "open_database()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "alembic" not in json.loads(done.stdout.strip().splitlines()[-1])


def test_the_heads_read_from_the_files_are_alembic_s(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    try:
        assert shipped_heads() == {head_revision(engine)} == {shipped_head()}
        assert not is_at_head(engine)  # no version table yet: Alembic is asked
        assert current_revision(engine) is None
    finally:
        engine.dispose()


def test_the_web_servers_arbiter_loads_neither_the_app_nor_the_database() -> None:
    loaded = loaded_after("import alertstation.server")
    unwanted = [*HEAVY, "alertstation.app", "falcon", "jinja2", "sqlalchemy", "numpy", "alembic"]
    assert [name for name in unwanted if name in loaded] == []


def test_the_health_check_reads_the_schema_revision_without_alembic(
    migrated_env: dict[str, str],
) -> None:
    env = migrated_env
    probe = (
        "import sys, json\n"
        "import falcon.testing\n"
        "from alertstation.app import create_app\n"
        "from alertstation.settings import Settings\n"
        "client = falcon.testing.TestClient(create_app(Settings.from_env()))\n"
        "for path in ('/healthz', '/api/system_status'):\n"
        "    assert client.simulate_get(path).json['schema'] == 'current', path\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    # a station on SQLite never needs PostgreSQL's dialect either
    assert [name for name in ("alembic", "sqlalchemy.dialects.postgresql") if name in loaded] == []


def test_the_run_supervisor_loads_neither_the_database_nor_package_metadata() -> None:
    loaded = loaded_after("import alertstation.worker.supervisor")
    unwanted = [*HEAVY, "sqlalchemy", "gunicorn", "numpy", "importlib.metadata", "email"]
    assert [name for name in unwanted if name in loaded] == []
    # the version is still there for whoever asks
    assert loaded_after("import alertstation\nalertstation.__version__") >= {"importlib.metadata"}


def test_importing_an_empty_access_log_builds_no_station(
    migrated_env: dict[str, str], tmp_path: Path
) -> None:
    empty = tmp_path / "access.log"
    empty.write_text("")
    probe = (
        "import sys, json\n"
        "from alertstation.cli import main\n"
        f"code = main(['traffic', 'import', '--format', 'combined', {str(empty)!r}])\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=migrated_env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    code, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert code == 0
    unwanted = [
        *HEAVY,
        "numpy",
        "ua_parser",  # its regex set is built for the first agent read, and there is none
        "alertstation.station",
        "alertstation.zones.catalog",
        "jinja2",
        "alembic",
        "sqlalchemy.dialects.postgresql",
    ]
    assert [name for name in unwanted if name in loaded] == []
