"""The operations settings sections: stored in ``alertstation.settings_admin.sections``.

The sections live below eas and audio so that the layers acting on them can read them; this
module keeps the operations package's import path working.
"""

from alertstation.settings_admin.sections import (
    APPLICATION,
    DECODER_FEED,
    GPIO_PINS,
    HARDWARE,
    MAX_CAPTURE_DEVICES,
    MAX_RELAYS,
    RETENTION_DAYS,
    SECTIONS,
    TTS,
    Field,
    RetentionPolicy,
    Section,
    SectionValues,
    check_body,
    decoder_feed_settings,
    hardware_settings,
    load,
    retention_policy,
    save,
    section_named,
    tts_settings,
)

__all__ = [
    "APPLICATION",
    "DECODER_FEED",
    "GPIO_PINS",
    "HARDWARE",
    "MAX_CAPTURE_DEVICES",
    "MAX_RELAYS",
    "RETENTION_DAYS",
    "SECTIONS",
    "TTS",
    "Field",
    "RetentionPolicy",
    "Section",
    "SectionValues",
    "check_body",
    "decoder_feed_settings",
    "hardware_settings",
    "load",
    "retention_policy",
    "save",
    "section_named",
    "tts_settings",
]
