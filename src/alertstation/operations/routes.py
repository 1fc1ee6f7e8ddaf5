"""Routes of the operations package."""

from alertstation.context import Station
from alertstation.http.routing import Route, permission
from alertstation.operations.resources import (
    Certificate,
    EnvConfigPage,
    RelayTest,
    SettingsCollection,
    SettingsPage,
    SettingsSection,
    TtsPreview,
)
from alertstation.operations.upkeep_resources import BackupPage, OptimizeDatabase, UpgradePage

VIEW = permission("system.view_config")
CONFIGURE = permission("system.configure")


def routes(station: Station) -> list[Route]:
    """Return this package's routes."""
    certificate = Certificate(station)
    preview = TtsPreview(station)
    backup = BackupPage(station)
    optimize = OptimizeDatabase(station)
    return [
        Route("GET", "/admin/operations/backup", backup, CONFIGURE, summary="Backup page"),
        Route(
            "POST",
            "/admin/operations/backup",
            backup,
            CONFIGURE,
            summary="Download a backup archive (keys only for an admin who asks)",
        ),
        Route("GET", "/admin/optimize_db", optimize, CONFIGURE, summary="Database size"),
        Route(
            "POST",
            "/admin/optimize_db",
            optimize,
            CONFIGURE,
            summary="ANALYZE, VACUUM (REINDEX on SQLite); size before and after",
        ),
        Route(
            "GET",
            "/admin/operations/upgrade",
            UpgradePage(station),
            CONFIGURE,
            summary="Version, schema revision, migrations, release notes and upgrade steps",
        ),
        Route("GET", "/admin/settings", SettingsPage(station), VIEW, summary="Settings page"),
        Route(
            "GET",
            "/api/settings",
            SettingsCollection(station),
            VIEW,
            summary="Every operations settings section (secrets as *_set flags)",
        ),
        Route(
            "PUT",
            "/api/settings/{section}",
            SettingsSection(station),
            CONFIGURE,
            summary="Save one settings section; config.updated audit (names, non-secret values)",
        ),
        Route(
            "POST",
            "/api/settings/hardware/test-relay",
            RelayTest(station),
            CONFIGURE,
            summary="Close a saved relay pin briefly (transmitter keying test)",
        ),
        Route(
            "GET",
            "/api/settings/tts/preview",
            preview,
            CONFIGURE,
            summary="A short espeak-ng WAV (voice, rate, volume as query parameters)",
        ),
        Route(
            "POST",
            "/api/settings/tts/preview",
            preview,
            CONFIGURE,
            summary="A short espeak-ng WAV in the given or saved voice settings",
        ),
        Route(
            "GET",
            "/api/settings/certificate",
            certificate,
            VIEW,
            summary="The installed TLS certificate and its expiry",
        ),
        Route(
            "POST",
            "/api/settings/certificate",
            certificate,
            CONFIGURE,
            summary="Upload a TLS certificate chain and key (checked); audited by name",
        ),
        Route(
            "GET",
            "/admin/env_config",
            EnvConfigPage(station),
            CONFIGURE,
            summary="Effective configuration as an env file, secrets redacted",
        ),
    ]
