"""Fuzz P-VTEC with strings of the right shape and arbitrary field values.

``tests/alerts/test_vtec.py`` covers arbitrary text and round trips of valid strings. Most
arbitrary text fails the outer pattern at once; here every string has the P-VTEC shape, so the
field checks behind the pattern run: unknown classes and actions, months 13-99, day 31 of a
30-day month, hour 24, the all-zero "not given" time on either side, end before begin, and
``event_key`` with and without a sent time. The answer is a Vtec that formats back to the same
text, or a ValueError.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import example, given
from hypothesis import strategies as st

from alertstation.alerts.vtec import Vtec, parse_vtec, parse_vtec_strings
from tests.fuzz.fuzzing import fuzz

UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
DIGITS = "0123456789"


def _field(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=size, max_size=size)


TIMES = st.sampled_from(["000000T0000Z", "250229T1200Z", "240229T2359Z", "250431T0000Z"]) | (
    st.tuples(*(_field(DIGITS, 2) for _ in range(5))).map(
        lambda p: f"{p[0]}{p[1]}{p[2]}T{p[3]}{p[4]}Z"
    )
)
SHAPED = st.builds(
    lambda k, action, office, phen, sig, etn, begin, end: (
        f"/{k}.{action}.{office}.{phen}.{sig}.{etn}.{begin}-{end}/"
    ),
    _field(UPPER, 1) | st.sampled_from("OTEX"),
    _field(UPPER, 3) | st.sampled_from(["NEW", "CON", "EXT", "CAN", "EXP", "UPG"]),
    _field(UPPER, 4),
    _field(UPPER + DIGITS, 2),
    _field(UPPER, 1),
    _field(DIGITS, 4),
    TIMES,
    TIMES,
)
SENT = st.none() | st.datetimes(
    datetime(2000, 1, 1), datetime(2099, 12, 31), timezones=st.just(UTC)
)


@fuzz(100)
@given(text=SHAPED, sent=SENT, padding=st.sampled_from(["", " ", "\n", "\t "]))
@example(text="/O.NEW.KOUN.SV.W.0000.000000T0000Z-000000T0000Z/", sent=None, padding="")
@example(text="/O.CAN.KOUN.SV.W.9999.991231T2359Z-000101T0000Z/", sent=None, padding="")
def test_shaped_strings_give_a_vtec_or_value_error(
    text: str, sent: datetime | None, padding: str
) -> None:
    try:
        vtec = parse_vtec(padding + text + padding)
    except ValueError as ex:
        assert str(ex)
        return
    assert isinstance(vtec, Vtec) and str(vtec) == text
    assert vtec.begin is None or vtec.end is None or vtec.begin <= vtec.end
    try:
        key = vtec.event_key(sent)
    except ValueError:
        assert vtec.begin is None and vtec.end is None and sent is None
    else:
        assert (key.office, key.etn) == (vtec.office, vtec.etn) and 2000 <= key.year <= 2099


@fuzz(60)
@given(
    values=st.lists(
        SHAPED | st.text(max_size=12) | st.none() | st.integers() | st.binary(max_size=4),
        max_size=4,
    )
)
def test_lists_of_anything_give_vtecs_or_value_error(values: list[object]) -> None:
    try:
        found = parse_vtec_strings(values)  # type: ignore[arg-type]
    except ValueError as ex:
        assert str(ex)
        return
    assert all(isinstance(v, Vtec) for v in found)
    assert " ".join(str(v) for v in found) == " ".join(
        token for value in values for token in str(value).split()
    )
