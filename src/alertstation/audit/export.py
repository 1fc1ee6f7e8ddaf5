"""Render audit events as CSV and as a paginated PDF report (fpdf2, A4 landscape)."""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Sequence
from datetime import datetime

import orjson

from alertstation import lazy
from alertstation.audit.ledger import format_time
from alertstation.audit.service import AuditEvent
from alertstation.http.csv_cells import safe_cell

fpdf = lazy.module("fpdf")

CSV_COLUMNS = (
    "id",
    "created_at",
    "user_id",
    "username",
    "client_ip",
    "user_agent",
    "action",
    "target",
    "details",
)


def events_to_csv(events: Sequence[AuditEvent]) -> str:
    """Return the events as CSV text with a header row, newest first as given."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for event in events:
        details = orjson.dumps(event.details, option=orjson.OPT_SORT_KEYS).decode()
        writer.writerow(
            [
                event.id,
                format_time(event.created_at),
                "" if event.user_id is None else event.user_id,
                safe_cell(event.username),
                safe_cell(event.client_ip),
                safe_cell(event.user_agent),
                safe_cell(event.action),
                safe_cell(event.target),
                safe_cell(details),
            ]
        )
    return buffer.getvalue()


# (heading, width in mm) of the PDF table; the widths fill A4 landscape inside 10 mm margins.
_PDF_COLUMNS = (
    ("ID", 14.0),
    ("Time (UTC)", 36.0),
    ("User", 28.0),
    ("Address", 30.0),
    ("Action", 32.0),
    ("Target", 36.0),
    ("Details", 58.0),
    ("User agent", 43.0),
)
_LINE_MM = 3.6
_PAD_MM = 0.9
_MAX_LINES = 3
_BODY_PT = 7.5


def _latin1(text: str) -> str:
    # The PDF core fonts cover Latin-1 only; anything else shows as "?" (the CSV keeps it all).
    return text.encode("latin-1", "replace").decode("latin-1")


class _AuditPages:
    """An FPDF document whose every page repeats the column headings and numbers itself.

    Mixed into ``fpdf.FPDF`` by :func:`_report_class`, so fpdf is imported on the first report.
    """

    def __init__(self, subtitle: str, generated: str) -> None:
        super().__init__(orientation="L", unit="mm", format="A4")
        self.subtitle = subtitle
        self.generated = generated
        self.set_margins(10, 10, 10)
        self.set_auto_page_break(auto=True, margin=14)

    def header(self) -> None:
        if self.page_no() == 1:
            self.set_font("Helvetica", "B", 15)
            self.cell(0, 8, "Audit log", new_x="LMARGIN", new_y="NEXT")
            self.set_font("Helvetica", "", 9)
            self.cell(0, 5, _latin1(f"Filters: {self.subtitle}"), new_x="LMARGIN", new_y="NEXT")
            self.cell(0, 5, _latin1(self.generated), new_x="LMARGIN", new_y="NEXT")
            self.ln(2)
        self.set_font("Helvetica", "B", 8)
        self.set_fill_color(234, 238, 242)
        for heading, width in _PDF_COLUMNS:
            self.cell(width, 6, heading, border=1, fill=True)
        self.ln(6)

    def footer(self) -> None:
        self.set_y(-10)
        self.set_font("Helvetica", "", 8)
        self.cell(0, 5, "Alert Station audit log export", align="L")
        self.set_x(self.l_margin)
        self.cell(0, 5, f"Page {self.page_no()} of {{nb}}", align="R")

    def wrap(self, text: str, width: float) -> list[str]:
        """Split text into lines that fit ``width`` mm; past _MAX_LINES the last line ends "..."."""
        lines: list[str] = []
        current, used = "", 0.0
        for char in _latin1(text[: _MAX_LINES * 200]):
            if char == "\n":
                lines.append(current)
                current, used = "", 0.0
                continue
            char_width = self.get_string_width(char)
            if current and used + char_width > width:
                lines.append(current)
                current, used = "", 0.0
            current += char
            used += char_width
        lines.append(current)
        if len(lines) > _MAX_LINES:
            last = lines[_MAX_LINES - 1]
            while last and self.get_string_width(last + "...") > width:
                last = last[:-1]
            lines = [*lines[: _MAX_LINES - 1], last + "..."]
        return lines

    def row(self, cells: Sequence[str]) -> None:
        """Draw one table row; start a new page (with headings) first when it would not fit."""
        self.set_font("Helvetica", "", _BODY_PT)
        wrapped = [
            self.wrap(text, width - 2 * _PAD_MM)
            for text, (_, width) in zip(cells, _PDF_COLUMNS, strict=True)
        ]
        height = max(len(lines) for lines in wrapped) * _LINE_MM + 2 * _PAD_MM
        if self.will_page_break(height):
            self.add_page()
            self.set_font("Helvetica", "", _BODY_PT)
        top, x = self.get_y(), self.l_margin
        for lines, (_, width) in zip(wrapped, _PDF_COLUMNS, strict=True):
            self.rect(x, top, width, height)
            for index, line in enumerate(lines):
                self.set_xy(x + _PAD_MM, top + _PAD_MM + index * _LINE_MM)
                self.cell(width - 2 * _PAD_MM, _LINE_MM, line)
            x += width
        self.set_xy(self.l_margin, top + height)


@functools.cache
def _report_class() -> type:
    """Return the report class: the pages above on fpdf's document."""
    return type("_AuditReport", (_AuditPages, fpdf.FPDF), {})


def events_to_pdf(events: Sequence[AuditEvent], *, filters: str, generated_at: datetime) -> bytes:
    """Return the events as a PDF report: title, filters, generation time, paginated table."""
    stamp = generated_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    summary = f"Generated {stamp}; {len(events)} event(s), newest first"
    pdf = _report_class()(filters, summary)
    pdf.set_title("Audit log")
    pdf.set_creator("Alert Station")
    pdf.add_page()
    if not events:
        pdf.set_font("Helvetica", "", 10)
        pdf.cell(0, 8, "No audit events match these filters.")
    for event in events:
        pdf.row(
            [
                str(event.id),
                event.created_at.strftime("%Y-%m-%d %H:%M:%S"),
                event.username or "",
                event.client_ip or "",
                event.action,
                event.target or "",
                event.details_text,
                event.user_agent or "",
            ]
        )
    return bytes(pdf.output())
