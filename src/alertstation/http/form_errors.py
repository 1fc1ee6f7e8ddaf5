"""Form errors in words for a re-rendered page: field name → message, with the field's label.

The browser half of the mechanism is ``web/static/js/form-errors.js``; the template half is
``web/templates/_form_errors.html`` (see ``docs/forms.md``). Both word a message the same way:
one that begins with the field's name (``zone_codes: …``, ``url must …``) begins with the
field's label instead.
"""

from __future__ import annotations

from collections.abc import Mapping

from alertstation.errors import AppError

#: The key of errors that belong to no field (shown in the form's summary).
NO_FIELD = ""


def in_words(message: str, field: str, label: str) -> str:
    """Return ``message`` with a leading field name replaced by ``label``."""
    if not field or not label:
        return message
    for written in (field, field.replace("_", " ")):
        for joint in (": ", " "):
            if message.startswith(written + joint):
                return label + message[len(written) :]
    return message


def field_messages(error: AppError, labels: Mapping[str, str]) -> dict[str, str]:
    """Return the messages of ``error`` by field (``NO_FIELD`` for none), worded by ``labels``.

    Reads ``details.errors`` (several fields) or ``details.field``; the first message of a
    field wins. A field the form does not show goes under ``NO_FIELD``.
    """
    details = error.details or {}
    listed = details.get("errors")
    if isinstance(listed, list) and listed:
        pairs = [(str(item.get("field") or ""), str(item.get("message") or "")) for item in listed]
    else:
        pairs = [(str(details.get("field") or ""), error.message)]
    messages: dict[str, str] = {}
    for field, message in pairs:
        key = field if field in labels else NO_FIELD
        worded = in_words(message, field, labels.get(field, ""))
        if key in messages:
            if key == NO_FIELD:
                messages[key] += " " + worded
            continue
        messages[key] = worded
    return messages
