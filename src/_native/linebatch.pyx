# cython: language_level=3
"""Access-log lines into rows and import keys, a batch at a time: the compiled twin of
``alertstation.traffic.line_batch.PyLineBatch``.

Product code gets a reader from ``alertstation.traffic.line_batch.LineBatch``. The twin spends
more time in its own loop than in reading a line (stripping, decoding, hashing, numbering the
copies and formatting the key are each a few Python steps); this loop does them in C and calls
out only to read the row, hash the line and hand the row on.
"""

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.float cimport PyFloat_AS_DOUBLE, PyFloat_CheckExact
from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8

import hashlib

cdef object _sha256 = hashlib.sha256
cdef const char* _HEX = b"0123456789abcdef"
# A second written in ten hex digits: below 16 ** 10.
cdef double _KEY_SECONDS = 1099511627776.0


cdef inline bint _blank(const char* text, Py_ssize_t size):
    """Whether ``text`` holds only ASCII whitespace (as ``bytes.strip`` removes)."""
    cdef Py_ssize_t i
    cdef char c
    for i in range(size):
        c = text[i]
        if c != 32 and (c < 9 or c > 13):
            return False
    return True


@cython.final
cdef class LineBatch:
    """Read lines into rows and import keys, a batch at a time (see ``PyLineBatch``)."""

    cdef object _row, _filtered, _progress
    cdef Py_ssize_t _ts, _generation
    cdef double _oldest, _live_from, _live_until
    cdef dict _new, _old
    cdef Py_ssize_t _lines, _unparsable, _filtered_lines, _too_old, _recorded_live
    cdef object _first_bad
    cdef public Py_ssize_t number

    def __init__(
        self,
        row,
        filtered,
        Py_ssize_t ts_index,
        double oldest,
        double live_from,
        double live_until,
        progress,
        Py_ssize_t generation=200_000,
    ):
        if generation < 1:
            raise ValueError(f"a generation of {generation} lines")
        self._row, self._filtered, self._ts = row, filtered, ts_index
        self._oldest, self._live_from, self._live_until = oldest, live_from, live_until
        self._progress, self._generation = progress, generation
        self._new, self._old = {}, {}
        self.number = 0
        self._first_bad = None
        self._lines = self._unparsable = self._filtered_lines = 0
        self._too_old = self._recorded_live = 0

    def read(self, lines, Py_ssize_t batch):
        """Read ``lines`` until the one before a line whose number is a multiple of ``batch``,
        or their end; return the rows kept, their keys, and whether the lines may go on."""
        if batch < 1:
            raise ValueError(f"a batch of {batch} lines")
        cdef list rows = [], keys = []
        cdef bytes line
        cdef const char* text
        cdef Py_ssize_t size, end
        for raw in lines:
            self.number += 1
            if self._progress is not None:
                self._progress()
            line = raw if PyBytes_CheckExact(raw) else bytes(raw)
            text = PyBytes_AS_STRING(line)
            size = end = PyBytes_GET_SIZE(line)
            while end > 0 and (text[end - 1] == 13 or text[end - 1] == 10):
                end -= 1
            if not _blank(text, end):
                self._lines += 1
                self._take(line if end == size else line[:end], rows, keys)
            if (self.number + 1) % batch == 0:
                return rows, keys, True
        return rows, keys, False

    cdef _take(self, bytes line, list rows, list keys):
        cdef object row = self._row(
            PyUnicode_DecodeUTF8(PyBytes_AS_STRING(line), PyBytes_GET_SIZE(line), "replace")
        )
        if row is None:
            self._unparsable += 1
            if self._first_bad is None:
                self._first_bad = self.number
            return
        if row is self._filtered:
            self._filtered_lines += 1
            return
        cdef object ts = row[self._ts]
        cdef double seconds = PyFloat_AS_DOUBLE(ts) if PyFloat_CheckExact(ts) else ts
        if seconds < self._oldest:
            self._too_old += 1
            return
        if self._live_from <= seconds <= self._live_until:
            self._recorded_live += 1
            return
        cdef bytes digest = _sha256(line).digest()
        cdef PyObject* found = PyDict_GetItem(self._new, digest)
        if found == NULL:
            found = PyDict_GetItem(self._old, digest)
        cdef Py_ssize_t copy = (<object>found if found != NULL else 0) + 1
        if len(self._new) >= self._generation:
            self._old, self._new = self._new, {}
        PyDict_SetItem(self._new, digest, copy)
        rows.append(row)
        keys.append(_key(seconds, ts, digest, copy))

    def take_counts(self):
        """Return the lines read that were not blank, unparsable, filtered out, too old and
        recorded live since the last call, and the number of the first unparsable line."""
        taken = (
            self._lines,
            self._unparsable,
            self._filtered_lines,
            self._too_old,
            self._recorded_live,
            self._first_bad,
        )
        self._lines = self._unparsable = self._filtered_lines = 0
        self._too_old = self._recorded_live = 0
        return taken


cdef str _key(double seconds, object ts, bytes digest, Py_ssize_t copy):
    """``line_batch.import_key(int(ts), digest, copy)``, written into one buffer; ``seconds``
    is ``ts`` as a C double."""
    cdef long long second
    cdef char buffer[96]
    cdef Py_ssize_t i, size
    cdef const unsigned char* hashed
    cdef char digits[24]
    if not (0.0 <= seconds < _KEY_SECONDS) or PyBytes_GET_SIZE(digest) < 24 or copy < 1:
        return f"{int(ts):010x}-{digest[:24].hex()}:{copy}"
    second = <long long>seconds
    for i in range(10):
        buffer[9 - i] = _HEX[second & 15]
        second >>= 4
    buffer[10] = 45  # "-"
    hashed = <const unsigned char*>PyBytes_AS_STRING(digest)
    for i in range(24):
        buffer[11 + 2 * i] = _HEX[hashed[i] >> 4]
        buffer[12 + 2 * i] = _HEX[hashed[i] & 15]
    buffer[59] = 58  # ":"
    size = 0
    while copy > 0:
        digits[size] = 48 + copy % 10
        copy //= 10
        size += 1
    for i in range(size):
        buffer[60 + i] = digits[size - 1 - i]
    return PyUnicode_DecodeASCII(buffer, 60 + size, NULL)
