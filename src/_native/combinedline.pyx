# cython: language_level=3, boundscheck=False, wraparound=False
"""The fields of a combined/common access-log line, compiled.

The compiled twin of ``alertstation.traffic.combined_line.py_split_combined``, which matches the
line with the ``COMBINED`` pattern::

    ^(\\S+) +\\S+ +\\S+ +\\[([^\\]]+)\\] "((?:[^"\\\\]++|\\\\.)*+)" (\\d{3}) +(\\d+|-)
    (?: +"((?:[^"\\\\]++|\\\\.)*+)" +"((?:[^"\\\\]++|\\\\.)*+)")?

Every part of the pattern has one way to match (a run of non-space characters is followed by a
space, the bracketed time ends at its first ``]``, the quoted fields are possessive), so one pass
from the start decides it, in the same terms as Python's ``re`` on text: a space is what
``str.isspace`` calls one (``Py_UNICODE_ISSPACE``), a digit any decimal digit
(``Py_UNICODE_ISDECIMAL``), and the escape ``\\.`` takes any character but a line feed.
"""

cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_UCS4 PyUnicode_READ(int kind, void* data, Py_ssize_t index)
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)
    bint Py_UNICODE_ISDECIMAL(Py_UCS4 ch)
    object PyUnicode_Substring(object text, Py_ssize_t start, Py_ssize_t end)


cdef Py_UCS4 SPACE = 0x20, QUOTE = 0x22, BACKSLASH = 0x5C, NEWLINE = 0x0A
cdef Py_UCS4 OPEN = 0x5B, CLOSE = 0x5D, DASH = 0x2D


cdef inline Py_ssize_t _word(int kind, void* data, Py_ssize_t at, Py_ssize_t size):
    """Return the end of the run of non-space characters at ``at`` (``at`` when there is none)."""
    while at < size and not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, at)):
        at += 1
    return at


cdef inline Py_ssize_t _spaces(int kind, void* data, Py_ssize_t at, Py_ssize_t size):
    """Return the end of the run of U+0020 spaces at ``at``."""
    while at < size and PyUnicode_READ(kind, data, at) == SPACE:
        at += 1
    return at


cdef inline Py_ssize_t _quoted(int kind, void* data, Py_ssize_t at, Py_ssize_t size):
    """Return the end of the quoted field's text starting at ``at`` (its closing quote's index),
    or -1 when no closing quote follows."""
    cdef Py_UCS4 ch
    while at < size:
        ch = PyUnicode_READ(kind, data, at)
        if ch == QUOTE:
            return at
        if ch == BACKSLASH:
            if at + 1 < size and PyUnicode_READ(kind, data, at + 1) != NEWLINE:
                at += 2
                continue
            return -1  # an escape the pattern cannot take ends the field short of its quote
        at += 1
    return -1


def split_combined(str line):
    """Return the seven fields of a combined (or common) log line as the ``COMBINED`` pattern's
    groups (address, time, request, status, size, referrer, user agent; the last two None in
    common format), or None when the line does not match."""
    cdef int kind = PyUnicode_KIND(line)
    cdef void* data = PyUnicode_DATA(line)
    cdef Py_ssize_t size = len(line)
    cdef Py_ssize_t at, end, address_end, time_start, time_end
    cdef Py_ssize_t request_start, request_end, status_start, size_start, size_end
    cdef Py_ssize_t referrer_start, referrer_end, agent_start, agent_end
    cdef int count, word
    # The address, then two more words, each followed by spaces.
    address_end = _word(kind, data, 0, size)
    if address_end == 0:
        return None
    at = address_end
    for word in range(2):
        end = _spaces(kind, data, at, size)
        if end == at:
            return None
        at = _word(kind, data, end, size)
        if at == end:
            return None
    end = _spaces(kind, data, at, size)
    if end == at or end >= size or PyUnicode_READ(kind, data, end) != OPEN:
        return None
    # The time, up to the first ``]``.
    time_start = end + 1
    time_end = time_start
    while time_end < size and PyUnicode_READ(kind, data, time_end) != CLOSE:
        time_end += 1
    if time_end == time_start or time_end >= size:
        return None
    # ``] "`` and the request.
    at = time_end + 1
    if at + 1 >= size or PyUnicode_READ(kind, data, at) != SPACE:
        return None
    if PyUnicode_READ(kind, data, at + 1) != QUOTE:
        return None
    request_start = at + 2
    request_end = _quoted(kind, data, request_start, size)
    if request_end < 0:
        return None
    # ``" `` and three digits, then spaces.
    at = request_end + 1
    if at >= size or PyUnicode_READ(kind, data, at) != SPACE:
        return None
    status_start = at + 1
    for count in range(3):
        if status_start + count >= size:
            return None
        if not Py_UNICODE_ISDECIMAL(PyUnicode_READ(kind, data, status_start + count)):
            return None
    at = status_start + 3
    size_start = _spaces(kind, data, at, size)
    if size_start == at or size_start >= size:
        return None
    # The size: digits, or a dash.
    size_end = size_start
    while size_end < size and Py_UNICODE_ISDECIMAL(PyUnicode_READ(kind, data, size_end)):
        size_end += 1
    if size_end == size_start:
        if PyUnicode_READ(kind, data, size_start) != DASH:
            return None
        size_end = size_start + 1
    fields = (
        PyUnicode_Substring(line, 0, address_end),
        PyUnicode_Substring(line, time_start, time_end),
        PyUnicode_Substring(line, request_start, request_end),
        PyUnicode_Substring(line, status_start, status_start + 3),
        PyUnicode_Substring(line, size_start, size_end),
    )
    # Optionally, spaces and the quoted referrer, spaces and the quoted user agent.
    at = _spaces(kind, data, size_end, size)
    if at == size_end or at >= size or PyUnicode_READ(kind, data, at) != QUOTE:
        return fields + (None, None)
    referrer_start = at + 1
    referrer_end = _quoted(kind, data, referrer_start, size)
    if referrer_end < 0:
        return fields + (None, None)
    at = _spaces(kind, data, referrer_end + 1, size)
    if at == referrer_end + 1 or at >= size or PyUnicode_READ(kind, data, at) != QUOTE:
        return fields + (None, None)
    agent_start = at + 1
    agent_end = _quoted(kind, data, agent_start, size)
    if agent_end < 0:
        return fields + (None, None)
    return fields + (
        PyUnicode_Substring(line, referrer_start, referrer_end),
        PyUnicode_Substring(line, agent_start, agent_end),
    )
