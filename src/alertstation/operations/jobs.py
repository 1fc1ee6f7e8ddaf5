"""Every periodic job the worker's leader runs: the worker's own list and those of operations.

``operations`` imports the worker (backup and restore read its heartbeat), so the worker cannot
name operations' jobs without a cycle. This module, above both, is the one list the worker
command runs; a new operations job is added here and nowhere else.
"""

from __future__ import annotations

from typing import Final

from alertstation.operations.certificate import EXPIRY_CHECK_INTERVAL, expiry_job
from alertstation.operations.compliance.service import COMPLIANCE_JOB
from alertstation.worker.jobs import JOBS, Job

#: What ``alertstation worker`` runs, in this order on each tick.
STATION_JOBS: Final[tuple[Job, ...]] = (
    *JOBS,
    COMPLIANCE_JOB,
    Job("certificate-expiry", EXPIRY_CHECK_INTERVAL, expiry_job),
)
