# cython: language_level=3
"""The row of one combined access-log line: the compiled twin of ``RowEnricher.combined_row``.

Product code gets it from ``RowEnricher.combined_rows``, which gives this kernel's reader when
it is built and the enricher's own ``combined_row`` otherwise. The reader works from the
enricher's own caches (the same dict objects) and calls the enricher's methods for anything not
in them yet, so both give the same row for every line (``tests/traffic/test_enrich.py`` holds
both to the one-request path). What it saves is the Python around those lookups: reading the
time of a line in the minute of the line before, and building the row's tuple directly.
"""

cimport cython
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_SIZE, PyTuple_New, PyTuple_SET_ITEM


cdef inline void _put(tuple row, Py_ssize_t* at, object value):
    Py_INCREF(value)
    PyTuple_SET_ITEM(row, at[0], value)
    at[0] += 1


cdef inline bint _digit(Py_UCS4 c):
    return u"0" <= c <= u"9"


# Days before each month of a common year.
cdef int[12] _BEFORE_MONTH = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334]
# date(1970, 1, 1).toordinal()
# Days in each month of a common year.
cdef int[12] _DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
cdef long long _EPOCH_ORDINAL = 719163
# The stored times: from the epoch up to (not including) the start of year 10000, UTC.
cdef long long _END_TIME = 253402300800


cdef inline int _two(str text, Py_ssize_t at):
    """The number of two ASCII digits at ``at``, or -1."""
    cdef Py_UCS4 a = text[at], b = text[at + 1]
    if not (_digit(a) and _digit(b)):
        return -1
    return (<int>a - 48) * 10 + (<int>b - 48)


cdef str _MONTHS = u"JanFebMarAprMayJunJulAugSepOctNovDec"


cdef int _month(str text):
    """The month of the three letters at 3..5 ("Jan" .. "Dec"), or 0."""
    cdef int month
    for month in range(12):
        if (
            text[3] == _MONTHS[3 * month]
            and text[4] == _MONTHS[3 * month + 1]
            and text[5] == _MONTHS[3 * month + 2]
        ):
            return month + 1
    return 0


cdef bint _fixed_time(str text, long long* out):
    """Read ``10/Oct/2026:13:55:36 -0700`` written with ASCII digits in every field, each in its
    range (a day its month has, hours < 24, minutes and seconds < 60), as
    ``timestamps.parse_log_time`` reads it; False for any other text, which is left to ``parse_log_time`` (it may still read it, or
    refuse it)."""
    cdef int day, month, year_high, year_low, hours, minutes, secs, zone_hours, zone_minutes
    cdef long long year, years, days, clock, offset, value
    if len(text) != 26 or text[2] != u"/" or text[6] != u"/" or text[11] != u":":
        return False
    if text[20] != u" " or (text[21] != u"+" and text[21] != u"-"):
        return False
    month = _month(text)
    day = _two(text, 0)
    year_high = _two(text, 7)
    year_low = _two(text, 9)
    hours = _two(text, 12)
    minutes = _two(text, 15)
    secs = _two(text, 18)
    zone_hours = _two(text, 22)
    zone_minutes = _two(text, 24)
    if (
        month == 0 or day < 0 or year_high < 0 or year_low < 0 or hours < 0 or minutes < 0
        or secs < 0 or zone_hours < 0 or zone_minutes < 0
    ):
        return False
    year = year_high * 100 + year_low
    if year == 0:  # no such year: ``parse_log_time`` refuses it
        return False
    if hours >= 24 or minutes >= 60 or secs >= 60 or zone_minutes >= 60 or day == 0:
        return False
    if day > _DAYS_IN_MONTH[month - 1] and not (
        month == 2 and day == 29 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    ):
        return False
    clock = hours * 3600 + minutes * 60 + secs
    years = year - 1
    days = years * 365 + years // 4 - years // 100 + years // 400 + _BEFORE_MONTH[month - 1]
    if month > 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        days += 1
    days += 1 - _EPOCH_ORDINAL + day - 1
    offset = zone_hours * 3600 + zone_minutes * 60
    value = days * 86400 + clock - (offset if text[21] == u"+" else -offset)
    if value < 0 or value >= _END_TIME:
        return False
    out[0] = value
    return True


cdef object _size(str length, long long most):
    """A logged size as stored (``rows.stored_bytes(int(length))``; "-" is unknown)."""
    cdef Py_ssize_t n = len(length), i
    cdef long long value = 0
    cdef Py_UCS4 c
    if length == u"-":
        return None
    if n == 0 or n > 18:  # none, or more digits than a C integer holds: Python's int
        value_object = int(length)
        return value_object if 0 <= value_object <= most else None
    for i in range(n):
        c = length[i]
        if not _digit(c):  # another script's digits, which ``int`` reads too
            value_object = int(length)
            return value_object if 0 <= value_object <= most else None
        value = value * 10 + (<long long>c - 48)
    return value if value <= most else None


@cython.final
cdef class CombinedRows:
    """Read combined lines into rows for one ``RowEnricher`` (see the module)."""

    cdef object enricher, split, parse_time, unescape, remember, make_agent
    cdef object make_referrer
    cdef dict addresses, lines, raw_agents, raw_referrers
    cdef bint exclude_internal, exclude_bots
    cdef object no_language, source, filtered
    cdef str minute_text, zone_text
    cdef long long minute_start, most_bytes

    def __init__(
        self, enricher, split, parse_time, unescape, remember, long long most_bytes, filtered,
        source
    ):
        self.enricher = enricher
        self.split = split
        self.parse_time = parse_time
        self.unescape = unescape
        self.remember = remember
        self.most_bytes = most_bytes
        self.filtered = filtered
        self.source = source
        self.addresses = enricher._addresses
        self.lines = enricher._lines
        self.raw_agents = enricher._raw_agents
        self.raw_referrers = enricher._raw_referrers
        self.make_agent = enricher._agent
        self.make_referrer = enricher._referrer
        self.no_language = enricher._no_language
        self.exclude_internal = bool(enricher.settings.exclude_internal)
        self.exclude_bots = bool(enricher.settings.exclude_bots)
        self.minute_text = None
        self.zone_text = None
        self.minute_start = 0

    cdef tuple _cached(self, dict cache, object field, object make):
        """The parts of a quoted field as it appears in the line, made from it unescaped (and
        remembered) the first time."""
        cdef PyObject* found = PyDict_GetItem(cache, field)
        if found != NULL and <object>found is not None:
            return <tuple>found
        return <tuple>self.remember(cache, field, make(self.unescape(field)))

    def __call__(self, str line):
        """Return the row of ``line``: None when it is not a combined line (or holds a NUL),
        ``FILTERED`` when the settings leave it out."""
        cdef PyObject* found
        cdef Py_ssize_t size, at
        cdef tuple fields, address, request, agent, referred, row
        cdef str time_text, seconds
        cdef long long second
        cdef object ts, hour, logged, status, length, referrer, user_agent, ip_text, value
        if u"\x00" in line:
            return None
        value = self.split(line)
        if value is None:
            return None
        fields = <tuple>value
        ip_text, time_text, logged, status, length, referrer, user_agent = fields
        found = PyDict_GetItem(self.addresses, ip_text)
        if found == NULL or <object>found is None:
            value = self.enricher._address(ip_text)
            if value is None:
                return None
            address = <tuple>value
        else:
            address = <tuple>found
        size = len(time_text)
        if (
            self.minute_text is not None
            and size >= 20
            and time_text[17] == u":"
            and _digit(time_text[18])
            and _digit(time_text[19])
            and time_text[18] < u"6"
            and time_text.startswith(self.minute_text)
            and len(self.minute_text) == 17
            and size - 20 == len(self.zone_text)
            and time_text.endswith(self.zone_text)
        ):  # the minute of the line before, as the twin reads it
            second = (
                self.minute_start
                + (<long long>time_text[18] - 48) * 10
                + (<long long>time_text[19] - 48)
            )
            ts = float(second)
            hour = second // 3600  # a stored time is never negative
        elif _fixed_time(time_text, &second):
            ts = float(second)
            hour = second // 3600
            self.minute_text, self.zone_text = time_text[:17], time_text[20:]
            self.minute_start = second - _two(time_text, 18)
        else:
            seconds = time_text[18:20]
            try:
                ts = self.parse_time(time_text)
            except ValueError:
                return None
            self.minute_text, self.zone_text = time_text[:17], time_text[20:]
            self.minute_start = <long long>int(ts) - int(seconds)
            hour = int(ts // 3600)
        found = PyDict_GetItem(self.lines, (logged, status))
        if found != NULL and <object>found:
            request = <tuple>found
        else:
            value = self.enricher._logged_request(logged, status)
            if value is None:
                return None
            request = <tuple>value
        if self.exclude_internal and address[0]:
            return self.filtered
        if not request[3]:
            return self.filtered
        agent = self._cached(self.raw_agents, user_agent, self.make_agent)
        if self.exclude_bots and agent[5]:
            return self.filtered
        referred = self._cached(self.raw_referrers, referrer, self.make_referrer)
        row = PyTuple_New(
            13 + PyTuple_GET_SIZE(referred) + 4 + PyTuple_GET_SIZE(agent) - 1 + 2
            + PyTuple_GET_SIZE(address) - 4
        )
        at = 0
        _put(row, &at, None)  # occurred_at: the writer stores the moment of ts
        _put(row, &at, ts)
        _put(row, &at, hour)
        _put(row, &at, request[0])
        _put(row, &at, request[1])
        _put(row, &at, request[2])
        _put(row, &at, None)
        _put(row, &at, _size(<str>length, self.most_bytes))
        _put(row, &at, address[1])
        _put(row, &at, address[2])
        _put(row, &at, address[3])
        _put(row, &at, None)
        _put(row, &at, agent[0])
        for value in referred:
            _put(row, &at, value)
        _put(row, &at, self.no_language)
        _put(row, &at, False)
        _put(row, &at, request[4])
        _put(row, &at, request[5])
        for value in agent[1:]:
            _put(row, &at, value)
        _put(row, &at, None)
        _put(row, &at, self.source)
        for value in address[4:]:
            _put(row, &at, value)
        return row
