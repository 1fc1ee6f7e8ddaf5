"""The station log's month laid out for an inspector: CSV and PDF (fpdf2, A4 portrait).

Both give one section per day (days in the station's time zone, every day of the month, "No
entries" for a quiet one), each entry with its local time and UTC, kind, source, header, plain
text, result and who. The PDF ends with the chief operator's reviews of the month or of its
weeks. CSV cells go through :func:`alertstation.http.csv_cells.write_rows`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any, Final

from alertstation import lazy
from alertstation.eas.log.service import Month
from alertstation.http.csv_cells import write_rows

fpdf = lazy.module("fpdf")

CSV_COLUMNS: Final[tuple[str, ...]] = (
    "day",
    "local_time",
    "utc_time",
    "id",
    "kind",
    "source",
    "event_code",
    "header",
    "text",
    "result",
    "by",
    "corrects_id",
    "details",
)


def _moment(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def by_day(entries: Sequence[dict[str, Any]], month: Month) -> list[tuple[date, list[Any]]]:
    """Return every local day of the month with its entries (oldest first)."""
    days: dict[date, list[Any]] = {}
    day = month.first_day
    while day < month.next_first_day:
        days[day] = []
        day += timedelta(days=1)
    for entry in entries:
        local = _moment(entry["at"]).astimezone(month.zone).date()
        days.setdefault(local, []).append(entry)
    return list(days.items())


def times(value: str, zone: tzinfo) -> tuple[str, str]:
    """Return an entry's local time (with its zone) and its UTC time."""
    moment = _moment(value)
    local = moment.astimezone(zone)
    name = local.tzname() or "UTC"
    name = f"UTC{name}" if name[:1] in "+-" else name
    return f"{local:%H:%M:%S} {name}", f"{moment.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"


def _details_text(details: dict[str, Any]) -> str:
    parts = []
    for key, value in sorted(details.items()):
        if value in (None, "", [], {}):
            continue
        if key == "outputs" and isinstance(value, list):
            value = ", ".join(
                f"{o.get('name')}: {'ok' if o.get('ok') else 'failed'}"
                + (f" ({o['error']})" if o.get("error") else "")
                for o in value
                if isinstance(o, dict)
            )
        parts.append(f"{key}: {value}")
    return "; ".join(parts)


def month_to_csv(entries: Sequence[dict[str, Any]], month: Month) -> str:
    """Return the month as CSV: a header row, then one row per entry grouped by local day (a
    quiet day has a row of its own saying so)."""
    rows: list[Sequence[object]] = [CSV_COLUMNS]
    for day, found in by_day(entries, month):
        if not found:
            rows.append([day.isoformat(), "", "", "", "", "", "", "", "No entries", "", "", "", ""])
        for entry in found:
            local, utc = times(entry["at"], month.zone)
            rows.append(
                [
                    day.isoformat(),
                    local,
                    utc,
                    entry["id"],
                    entry["kind"],
                    entry["source"],
                    entry["event_code"],
                    entry["header"],
                    entry["text"],
                    entry["result"],
                    entry["by"],
                    entry["corrects_id"],
                    _details_text(entry["details"]),
                ]
            )
    return write_rows(rows)


def _latin1(text: str) -> str:
    # The PDF core fonts cover Latin-1 only; anything else shows as "?" (the CSV keeps it all).
    return text.encode("latin-1", "replace").decode("latin-1")


_BODY_PT: Final[float] = 8.0
_LINE_MM: Final[float] = 4.0


def _title(month: Month) -> str:
    return f"EAS station log: {month.first_day:%B %Y}"


def month_to_pdf(
    entries: Sequence[dict[str, Any]],
    reviews: Sequence[dict[str, Any]],
    month: Month,
    *,
    generated_at: datetime,
) -> bytes:
    """Return the month as a PDF: a section per local day, then the reviews."""
    pdf = fpdf.FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_margins(12, 12, 12)
    pdf.set_auto_page_break(auto=True, margin=14)
    pdf.set_title(_title(month))
    pdf.set_creator("Alert Station")
    pdf.alias_nb_pages()
    pdf.footer = lambda: _footer(pdf, month)
    pdf.add_page()
    width = pdf.w - pdf.l_margin - pdf.r_margin
    pdf.set_font("Helvetica", "B", 15)
    pdf.cell(0, 8, _latin1(_title(month)), new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 9)
    zone = getattr(month.zone, "key", None) or str(month.zone)
    stamp = generated_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    for line in (
        f"Days in the station's time zone ({zone}); every time shown local and UTC.",
        f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}; generated {stamp}.",
    ):
        pdf.cell(0, 5, _latin1(line), new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)
    for day, found in by_day(entries, month):
        if pdf.will_page_break(16):
            pdf.add_page()
        pdf.set_font("Helvetica", "B", 11)
        pdf.set_fill_color(234, 238, 242)
        pdf.cell(
            0, 7, f"{day:%A, %B} {day.day}, {day.year}", fill=True, new_x="LMARGIN", new_y="NEXT"
        )
        if not found:
            pdf.set_font("Helvetica", "I", _BODY_PT)
            pdf.cell(0, _LINE_MM + 1, "No entries.", new_x="LMARGIN", new_y="NEXT")
        for entry in found:
            _entry(pdf, entry, month.zone, width)
        pdf.ln(1.5)
    _reviews(pdf, reviews, month.zone, width)
    return bytes(pdf.output())


def _footer(pdf: Any, month: Month) -> None:
    pdf.set_y(-10)
    pdf.set_font("Helvetica", "", 8)
    pdf.cell(0, 5, _latin1(_title(month)), align="L")
    pdf.set_x(pdf.l_margin)
    pdf.cell(0, 5, f"Page {pdf.page_no()} of {{nb}}", align="R")


def _entry(pdf: Any, entry: dict[str, Any], zone: tzinfo, width: float) -> None:
    local, utc = times(entry["at"], zone)
    head = f"{local} ({utc})  #{entry['id']}  {entry['kind']}"
    if entry["result"]:
        head += f"  [{entry['result']}]"
    if entry["source"]:
        head += f"  source {entry['source']}"
    if entry["by"]:
        head += f"  by {entry['by']}"
    if entry["corrects_id"]:
        head += f"  corrects #{entry['corrects_id']}"
    if pdf.will_page_break(_LINE_MM * 3):
        pdf.add_page()
    pdf.set_font("Helvetica", "B", _BODY_PT)
    pdf.multi_cell(width, _LINE_MM, _latin1(head), new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", _BODY_PT)
    if entry["header"]:
        pdf.set_font("Courier", "", _BODY_PT)
        pdf.multi_cell(width, _LINE_MM, _latin1(entry["header"]), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", _BODY_PT)
    for text in (entry["text"], _details_text(entry["details"])):
        if text:
            pdf.multi_cell(width, _LINE_MM, _latin1(text), new_x="LMARGIN", new_y="NEXT")
    if entry.get("corrected_by"):
        corrections = ", ".join(f"#{i}" for i in entry["corrected_by"])
        pdf.set_font("Helvetica", "I", _BODY_PT)
        pdf.multi_cell(
            width, _LINE_MM, f"Corrected by entry {corrections}.", new_x="LMARGIN", new_y="NEXT"
        )
    pdf.ln(1)


def _reviews(pdf: Any, reviews: Sequence[dict[str, Any]], zone: tzinfo, width: float) -> None:
    if pdf.will_page_break(20):
        pdf.add_page()
    pdf.ln(2)
    pdf.set_font("Helvetica", "B", 12)
    pdf.cell(0, 7, "Chief operator reviews", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 9)
    if not reviews:
        pdf.cell(0, 5, "Not reviewed yet.", new_x="LMARGIN", new_y="NEXT")
    for review in reviews:
        details = review["details"]
        period = (
            f"month {details.get('first_day', '')[:7]}"
            if details.get("period") == "month"
            else f"week {details.get('first_day')} to {details.get('last_day')}"
        )
        moment = _moment(review["at"])
        local, utc = times(review["at"], zone)
        when = f"{moment.astimezone(zone):%Y-%m-%d} {local} ({utc})"
        line = f"Reviewed by {review['by']} at {when}: {period}"
        if details.get("note"):
            line += f". {details['note']}"
        pdf.multi_cell(width, 5, _latin1(line), new_x="LMARGIN", new_y="NEXT")
