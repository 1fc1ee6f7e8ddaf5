"""Under CI=true the multi-host test fails without network namespaces; elsewhere it skips."""

from __future__ import annotations

import pytest

from tests.multihost import site


def test_without_namespaces_ci_fails_and_a_developer_s_run_skips(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(site, "namespaces_available", lambda: "ip netns add failed: denied")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="needs network namespaces under CI"):
        site.require_namespaces()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="ip netns add failed: denied"):
        site.require_namespaces()
    monkeypatch.setattr(site, "namespaces_available", lambda: None)
    site.require_namespaces()  # available: runs
