"""Routes of the audio package: sources, radio receivers, the stream test, alerts, archive."""

from alertstation.audio import pages
from alertstation.audio import resources as r
from alertstation.audio.preflight import PreflightGate
from alertstation.context import Station
from alertstation.http.outbound import OutboundClient
from alertstation.http.routing import Route, permission

RECEIVERS_CONFIGURE = permission("receivers.configure")
CONFIGURE = permission("system.configure")
VIEW_CONFIG = permission("system.view_config")
BROADCAST = permission("eas.broadcast")
ALERTS = "/api/audio/alerts"
SOURCES = "/api/audio/sources"
RECEIVERS = "/api/radio/receivers"
ONE = "/{source_id:int}"


def routes(station: Station) -> list[Route]:
    """Return this package's routes."""
    client = OutboundClient()
    settings = station.settings
    gate = PreflightGate(settings.preflight_concurrency, settings.preflight_seconds)
    need = RECEIVERS_CONFIGURE
    sources = r.SourceCollection(station, client, gate)
    source = r.SourceItem(station)
    restart = r.SourceRestart(station)
    receivers = r.SourceCollection(station, client, gate, kind="receiver")
    receiver = r.SourceItem(station, kind="receiver")
    receiver_restart = r.SourceRestart(station, kind="receiver")
    action = r.AlertAction(station)
    alert_routes = [
        Route("GET", ALERTS, r.AlertCollection(station), VIEW_CONFIG, summary="Audio alerts"),
        Route(
            "POST",
            ALERTS + "/resolve-all",
            r.ResolveAll(station),
            CONFIGURE,
            summary="Resolve every open audio alert",
        ),
        Route(
            "POST",
            ALERTS + "/{alert_id:int}/acknowledge",
            action,
            CONFIGURE,
            suffix="ack",
            summary="Acknowledge an audio alert",
        ),
        Route(
            "POST",
            ALERTS + "/{alert_id:int}/resolve",
            action,
            CONFIGURE,
            suffix="resolve",
            summary="Resolve an audio alert",
        ),
    ]
    received = [
        Route(
            "GET",
            "/api/eas/received",
            r.ReceivedCollection(station),
            VIEW_CONFIG,
            summary="SAME messages the monitor heard",
        ),
        Route(
            "GET",
            "/api/eas/received/{message_id:int}/audio",
            r.ReceivedAudio(station),
            VIEW_CONFIG,
            summary="The recorded audio of a received message",
        ),
    ]
    act = r.ReceivedAction(station)
    received += [
        Route(
            "GET",
            "/api/eas/received/refused",
            r.ReceivedRefused(station),
            VIEW_CONFIG,
            summary="Headers read exactly but refused under 11.31, with the rule broken",
        ),
        Route(
            "POST",
            "/api/eas/received/{message_id:int}/forward",
            act,
            BROADCAST,
            suffix="forward",
            summary="Forward a received message now (through its approval item); audited",
        ),
        Route(
            "POST",
            "/api/eas/received/{message_id:int}/acknowledge",
            act,
            BROADCAST,
            suffix="ack",
            summary="Acknowledge a received message (a waiting one is rejected); audited",
        ),
    ]
    audio_settings = r.SettingsResource(station)
    segment = r.ArchiveSegment(station)
    received += [
        Route(
            "GET",
            SOURCES + ONE + "/archive",
            r.ArchiveCollection(station),
            VIEW_CONFIG,
            summary="A source's archive segments",
        ),
        Route(
            "GET",
            SOURCES + ONE + "/archive/{name}",
            segment,
            VIEW_CONFIG,
            summary="Download an archive segment",
        ),
        Route(
            "DELETE",
            SOURCES + ONE + "/archive/{name}",
            segment,
            CONFIGURE,
            summary="Delete an archive segment",
        ),
    ]
    received += [
        Route("GET", "/audio", pages.SourcesPage(station), need, summary="Audio sources page"),
        Route(
            "GET", "/audio/alerts", pages.AlertsPage(station), VIEW_CONFIG, summary="Audio alerts"
        ),
        Route(
            "GET",
            "/eas/received",
            pages.ReceivedPage(station),
            VIEW_CONFIG,
            summary="Received SAME messages",
        ),
        Route("GET", "/api/audio/settings", audio_settings, VIEW_CONFIG, summary="Audio settings"),
        Route(
            "PUT", "/api/audio/settings", audio_settings, CONFIGURE, summary="Change audio settings"
        ),
    ]
    return (
        alert_routes
        + received
        + [
            Route("GET", SOURCES, sources, need, summary="Audio sources and their live state"),
            Route(
                "POST", SOURCES, sources, need, summary="Add an audio source (runs the preflight)"
            ),
            Route(
                "POST",
                SOURCES + "/test-stream",
                r.TestStream(station, client, gate),
                need,
                summary="Connect to a stream and report the real HTTP status",
            ),
            Route("GET", SOURCES + ONE, source, need, summary="One audio source"),
            Route("PUT", SOURCES + ONE, source, need, summary="Change an audio source"),
            Route("DELETE", SOURCES + ONE, source, need, summary="Remove an audio source"),
            Route("POST", SOURCES + ONE + "/restart", restart, need, summary="Restart a source"),
            Route("GET", RECEIVERS, receivers, need, summary="Radio receivers"),
            Route("POST", RECEIVERS, receivers, need, summary="Add a radio receiver"),
            Route("GET", RECEIVERS + ONE, receiver, need, summary="One radio receiver"),
            Route("PUT", RECEIVERS + ONE, receiver, need, summary="Change a radio receiver"),
            Route("DELETE", RECEIVERS + ONE, receiver, need, summary="Remove a radio receiver"),
            Route("POST", RECEIVERS + ONE + "/restart", receiver_restart, need, summary="Restart"),
            Route(
                "GET",
                RECEIVERS + ONE + "/diagnostics",
                r.ReceiverDiagnostics(station),
                need,
                summary="Why a receiver runs or does not",
            ),
        ]
    )
