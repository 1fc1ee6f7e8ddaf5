"""Routes of manual EAS, the message archive and the airing queue (settings: ``airing.routes``).

Every manual EAS, archive and queue route needs ``eas.broadcast``, reads included: drafts and
the archive are the operators' working material, and the audio preview of a draft is a
not-yet-aired alert.
"""

from alertstation.context import Station
from alertstation.eas import resources as r
from alertstation.eas.manual import MAX_UPLOAD_BYTES
from alertstation.http.routing import Route, permission

BROADCAST = permission("eas.broadcast")
_UPLOAD = MAX_UPLOAD_BYTES + 65536  # the WAV plus the form fields and multipart framing


def routes(station: Station) -> list[Route]:
    """Return the EAS routes."""
    events = "/eas/manual/events"
    messages = "/messages"
    activations = r.Activations(station)
    return [
        Route("GET", "/eas/manual", r.ManualPage(station), BROADCAST, summary="Manual EAS page"),
        Route("GET", events, activations, BROADCAST, summary="List activations"),
        Route(
            "POST",
            events,
            activations,
            BROADCAST,
            summary="Create a draft activation (JSON, or multipart with a WAV)",
            max_body=_UPLOAD,
        ),
        Route(
            "GET",
            events + "/{activation_id:int}/audio.wav",
            r.ActivationAudio(station),
            BROADCAST,
            summary="Preview an activation's audio",
        ),
        Route(
            "POST",
            events + "/{activation_id:int}/send",
            r.ActivationSend(station),
            BROADCAST,
            summary="Queue an activation for airing; eas.broadcast audit (non-blocking)",
        ),
        Route(
            "GET",
            events + "/{activation_id:int}/confirmation",
            r.ActivationConfirmation(station),
            BROADCAST,
            summary="What sending an activation would air: event, areas, length, outputs",
        ),
        Route(
            "POST",
            events + "/purge",
            r.ActivationsPurge(station),
            BROADCAST,
            summary="Purge activations; alert.deleted audit first (fail-closed)",
        ),
        Route(
            "POST",
            "/manual/generate",
            r.ManualGenerate(station),
            BROADCAST,
            summary="Render a message as WAV without airing it",
        ),
        Route(
            "POST",
            "/admin/eas/manual_generate",
            r.AdminManualGenerate(station),
            BROADCAST,
            summary="Create an activation and queue it for airing in one step",
            max_body=_UPLOAD,
        ),
        Route("GET", messages, r.Messages(station), BROADCAST, summary="Archive of aired messages"),
        Route(
            "GET",
            messages + "/{message_id:int}/audio.wav",
            r.MessageAudio(station),
            BROADCAST,
            summary="An archived message's WAV",
        ),
        Route(
            "POST",
            messages + "/{message_id:int}/resend",
            r.MessageResend(station),
            BROADCAST,
            summary="Queue an archived message to air again",
        ),
        Route(
            "GET",
            messages + "/{message_id:int}/confirmation",
            r.MessageConfirmation(station),
            BROADCAST,
            summary="What resending a message would air, and when it first aired",
        ),
        Route(
            "POST",
            messages + "/{message_id:int}/delete",
            r.MessageDelete(station),
            BROADCAST,
            summary="Delete an archived message; alert.deleted audit first",
        ),
        Route(
            "POST",
            messages + "/purge",
            r.MessagesPurge(station),
            BROADCAST,
            summary="Delete archived messages; alert.deleted audit first",
        ),
        Route(
            "GET",
            "/eas/queue",
            r.AiringQueue(station),
            BROADCAST,
            summary="The airing queue: queued, airing and recent messages, newest last",
        ),
    ]
