"""The one list of periodic jobs the worker command runs."""

from __future__ import annotations

from alertstation.operations.certificate import expiry_job
from alertstation.operations.compliance.service import compliance_job
from alertstation.operations.jobs import STATION_JOBS
from alertstation.worker.jobs import JOBS


def test_the_station_runs_every_worker_job_and_the_operations_jobs_once() -> None:
    names = [job.name for job in STATION_JOBS]
    assert len(names) == len(set(names)), "a job listed twice would run twice per tick"
    assert set(JOBS) <= set(STATION_JOBS)
    runs = {job.run for job in STATION_JOBS}
    assert {compliance_job, expiry_job} <= runs
    assert all(job.interval > 0 for job in STATION_JOBS)
