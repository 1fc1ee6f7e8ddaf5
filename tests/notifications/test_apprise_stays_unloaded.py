"""apprise is loaded by the first delivery only: never by the web app, the CLI or the worker's
start-up (they import the delivery module, which names apprise through ``alertstation.lazy``)."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
import alertstation.app, alertstation.cli, alertstation.server, alertstation.worker.runner
import alertstation.notifications.delivery
assert "apprise" not in sys.modules, "apprise was imported at start-up"
print("ok")
"""


def test_start_up_never_imports_apprise() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
