# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The access log line, compiled: the JSON ``JsonFormatter`` writes for an access record.

The compiled twin of ``alertstation.http.access_line.py_access_line``, which builds the line
with ``orjson`` from a dict: the same keys in the same order (time, level, logger, message,
request id, method, path, status, duration, client, user), the same escapes (``\\"``,
``\\\\``, the short escapes and ``\\u00XX`` for control characters, every other character as
UTF-8), the same time text (``datetime.fromtimestamp(created, UTC)`` to the millisecond, the
microseconds rounded half to even first) and the same number text for the duration.

The line is written into one buffer and decoded once. What it does not write, it refuses, and
the wrapper asks the twin instead: a value that is neither text nor None (``TypeError``), text
that is not UTF-8 (a lone surrogate: ``UnicodeEncodeError``), and a time or duration outside the
range written here (``ValueError``).
"""

from libc.math cimport floor, nearbyint
from libc.stdint cimport int64_t
from libc.string cimport memcpy
from cpython.mem cimport PyMem_Free, PyMem_Malloc


cdef extern from "<time.h>" nogil:
    ctypedef long time_t
    struct tm:
        int tm_sec
        int tm_min
        int tm_hour
        int tm_mday
        int tm_mon
        int tm_year
    tm *gmtime_r(const time_t *timep, tm *result)


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t *size) except NULL
    object PyUnicode_DecodeUTF8(const char *data, Py_ssize_t size, const char *errors)
    bint PyUnicode_Check(object value)


# The seconds before year 10000 (``datetime``'s last year) since the epoch.
cdef double _END_OF_TIME = 253402300800.0
# Durations in hundredths of a millisecond up to this are written exactly as the float's repr
# (and orjson) would: a float of at most 13 digits has no shorter text.
cdef int64_t _MAX_HUNDREDTHS = 10_000_000_000_000
# Fixed parts of the line.
cdef bytes _HEAD = b'","level":"info","logger":"alertstation.access","message":"'
cdef bytes _HEX = b"0123456789abcdef"
# The last second written, and its text "YYYY-MM-DDTHH:MM:SS" (the GIL is held throughout).
cdef int64_t _second = -1
cdef char _second_text[20]
# The escape of each byte below 0x20 (zero: \u00XX), by its value.
cdef char _SHORT[32]
_SHORT[0x08] = 98  # b
_SHORT[0x09] = 116  # t
_SHORT[0x0A] = 110  # n
_SHORT[0x0C] = 102  # f
_SHORT[0x0D] = 114  # r


cdef inline Py_ssize_t _put(char* out, Py_ssize_t at, const char* data, Py_ssize_t size):
    memcpy(out + at, data, size)
    return at + size


cdef Py_ssize_t _put_escaped(char* out, Py_ssize_t at, const char* data, Py_ssize_t size):
    """Write UTF-8 ``data`` as JSON writes it between quotes."""
    cdef Py_ssize_t i, start = 0
    cdef unsigned char byte
    cdef const char* hexdigits = _HEX
    for i in range(size):
        byte = <unsigned char>data[i]
        if byte >= 0x20 and byte != 0x22 and byte != 0x5C:
            continue
        if i > start:
            at = _put(out, at, data + start, i - start)
        start = i + 1
        out[at] = 92  # backslash
        if byte == 0x22 or byte == 0x5C:
            out[at + 1] = <char>byte
            at += 2
        elif _SHORT[byte]:
            out[at + 1] = _SHORT[byte]
            at += 2
        else:
            out[at + 1] = 117  # u
            out[at + 2] = 48
            out[at + 3] = 48
            out[at + 4] = hexdigits[byte >> 4]
            out[at + 5] = hexdigits[byte & 15]
            at += 6
    if size > start:
        at = _put(out, at, data + start, size - start)
    return at


cdef Py_ssize_t _put_digits(char* out, Py_ssize_t at, int64_t value, int width):
    """Write ``value`` (not negative) in decimal, zero-padded to ``width`` digits."""
    cdef char digits[24]
    cdef int count = 0
    while value > 0 or count < width:
        digits[count] = <char>(48 + value % 10)
        value //= 10
        count += 1
    while count > 0:
        count -= 1
        out[at] = digits[count]
        at += 1
    return at


cdef Py_ssize_t _put_time(char* out, Py_ssize_t at, double created) except -1:
    """Write ``datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")``."""
    global _second
    cdef double whole = floor(created)
    cdef int64_t second = <int64_t>whole
    cdef int64_t micros = <int64_t>nearbyint((created - whole) * 1_000_000.0)
    cdef time_t stamp
    cdef tm parts
    cdef Py_ssize_t t
    if micros >= 1_000_000:  # rounded up into the next second
        second += 1
        micros -= 1_000_000
    if second != _second:
        stamp = <time_t>second
        if gmtime_r(&stamp, &parts) == NULL:
            raise ValueError(f"no UTC time for {created!r}")
        t = _put_digits(_second_text, 0, parts.tm_year + 1900, 4)
        _second_text[t] = 45  # -
        t = _put_digits(_second_text, t + 1, parts.tm_mon + 1, 2)
        _second_text[t] = 45
        t = _put_digits(_second_text, t + 1, parts.tm_mday, 2)
        _second_text[t] = 84  # T
        t = _put_digits(_second_text, t + 1, parts.tm_hour, 2)
        _second_text[t] = 58  # :
        t = _put_digits(_second_text, t + 1, parts.tm_min, 2)
        _second_text[t] = 58
        _put_digits(_second_text, t + 1, parts.tm_sec, 2)
        _second = second
    at = _put(out, at, _second_text, 19)
    out[at] = 46  # .
    at = _put_digits(out, at + 1, micros // 1000, 3)
    return _put(out, at, b"+00:00", 6)


cdef Py_ssize_t _put_hundredths(char* out, Py_ssize_t at, int64_t hundredths):
    """Write ``hundredths / 100`` as the float's shortest text: ``12.0``, ``0.5``, ``3.25``."""
    cdef int64_t cents = hundredths % 100
    at = _put_digits(out, at, hundredths // 100, 1)
    out[at] = 46  # .
    if cents == 0:
        out[at + 1] = 48
        return at + 2
    if cents % 10 == 0:
        out[at + 1] = <char>(48 + cents // 10)
        return at + 2
    return _put_digits(out, at + 1, cents, 2)


cdef inline const char* _utf8(object text, Py_ssize_t* size) except NULL:
    if not PyUnicode_Check(text):
        raise TypeError(f"text or None expected, got {type(text).__name__}")
    return PyUnicode_AsUTF8AndSize(text, size)


def access_line(
    double created,
    object request_id,
    str method not None,
    str path not None,
    int64_t status,
    int64_t hundredths,
    object client_ip,
    object user,
):
    """Return the access line's JSON text, without its newline.

    ``hundredths`` is the duration in hundredths of a millisecond (negative: none, written as
    null); ``request_id`` is left out when None or empty; ``client_ip`` and ``user`` are text or
    None.
    """
    cdef Py_ssize_t method_size, path_size, id_size = 0, ip_size = 0, user_size = 0
    cdef const char* method_text = _utf8(method, &method_size)
    cdef const char* path_text = _utf8(path, &path_size)
    cdef const char* id_text = NULL
    cdef const char* ip_text = NULL
    cdef const char* user_text = NULL
    cdef char local[1024]
    cdef char* out = local
    cdef Py_ssize_t at, bound
    if request_id is not None:
        id_text = _utf8(request_id, &id_size)
    if client_ip is not None:
        ip_text = _utf8(client_ip, &ip_size)
    if user is not None:
        user_text = _utf8(user, &user_size)
    if not 0.0 <= created < _END_OF_TIME:
        raise ValueError(f"time {created!r} is outside the years 1970-9999")
    if not 0 <= status < 1_000_000:
        raise ValueError(f"status {status} is not written here")
    if hundredths >= _MAX_HUNDREDTHS:
        raise ValueError(f"duration of {hundredths} hundredths of a millisecond is too long")
    # Every byte of text becomes at most six; the fixed parts and numbers take under 300.
    bound = 300 + 6 * (2 * (method_size + path_size) + id_size + ip_size + user_size)
    if bound > <Py_ssize_t>sizeof(local):
        out = <char*>PyMem_Malloc(bound)
        if out == NULL:
            raise MemoryError()
    try:
        at = _put(out, 0, b'{"time":"', 9)
        at = _put_time(out, at, created)
        at = _put(out, at, _HEAD, len(_HEAD))
        at = _put_escaped(out, at, method_text, method_size)
        out[at] = 32  # space
        at = _put_escaped(out, at + 1, path_text, path_size)
        out[at] = 32
        at = _put_digits(out, at + 1, status, 1)
        out[at] = 34  # quote
        at += 1
        if id_size:
            at = _put(out, at, b',"request_id":"', 15)
            at = _put_escaped(out, at, id_text, id_size)
            out[at] = 34
            at += 1
        at = _put(out, at, b',"method":"', 11)
        at = _put_escaped(out, at, method_text, method_size)
        at = _put(out, at, b'","path":"', 10)
        at = _put_escaped(out, at, path_text, path_size)
        at = _put(out, at, b'","status":', 11)
        at = _put_digits(out, at, status, 1)
        at = _put(out, at, b',"duration_ms":', 15)
        at = _put_hundredths(out, at, hundredths) if hundredths >= 0 else _put(out, at, b"null", 4)
        at = _put(out, at, b',"client_ip":', 13)
        at = _put_text_or_null(out, at, ip_text, ip_size)
        at = _put(out, at, b',"user":', 8)
        at = _put_text_or_null(out, at, user_text, user_size)
        out[at] = 125  # }
        return PyUnicode_DecodeUTF8(out, at + 1, NULL)
    finally:
        if out != local:
            PyMem_Free(out)


cdef Py_ssize_t _put_text_or_null(char* out, Py_ssize_t at, const char* text, Py_ssize_t size):
    if text == NULL:
        return _put(out, at, b"null", 4)
    out[at] = 34
    at = _put_escaped(out, at + 1, text, size)
    out[at] = 34
    return at + 1
