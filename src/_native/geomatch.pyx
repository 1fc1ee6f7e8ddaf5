# cython: language_level=3
"""Dense integer ids for SAME and UGC geocodes, and alert matching against a bit table.

Id layout (every id in [0, ID_SPACE) is exactly one code, and every id is valid):

* SAME ``PSSCCC`` (six digits) is the number itself: ``P*100000 + SS*1000 + CCC``, in
  [0, 1000000).
* UGC ``SSTNNN`` (two letters, ``Z`` or ``C``, three digits) is
  ``UGC_BASE + ((L1*26 + L2)*2 + T)*1000 + NNN`` with letters A=0..Z=25 and T = 0 for Z, 1 for C,
  in [1000000, 2352000).

A code is read after removing surrounding ASCII whitespace; letters may be in either case.
Anything else is invalid (-1). Every block of 1000 ids starts on a multiple of 1000, hence on a
byte boundary of the bit table, so filling a county, state or letter pair is a ``memset``.

``build_table`` turns the configured ids into the set of alert ids that match at least one of
them (the wildcard rules are applied once here), so matching an alert is one bit test per code.
``match_encoded`` and ``build_table`` release the GIL; ``match_lists`` and the encoders read
Python str objects and so keep it. Their per-code work is a branch-free parse and a bit test:
an exact str stored compact ASCII with six characters is read straight from its object, any
other object goes through the general path. While one alert is read, the str objects of the
next ``C_PREFETCH_CODES`` codes are requested from memory, which is most of the speed on a large
batch (the objects are spread over far more memory than the caches hold).
Product code calls ``alertstation.alerts.matching``, which validates input before it gets here.
"""

cimport cython
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memset

import numpy as np

cdef extern from *:
    """
    /* Borrow the characters of an ASCII str, or return NULL for anything else. Non-ASCII
       text can never be a valid code, so it needs no decoding. */
    static const char* geomatch_ascii(PyObject* o, Py_ssize_t* length) {
        if (!PyUnicode_Check(o)) return NULL;
    #if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(o) < 0) { PyErr_Clear(); return NULL; }
    #endif
        if (!PyUnicode_IS_ASCII(o)) return NULL;
        *length = PyUnicode_GET_LENGTH(o);
        return (const char*)PyUnicode_DATA(o);
    }

    /* The characters of the common case, an exact str stored compact ASCII with six
       characters (what parsers produce), or NULL for anything else. Three loads and compares
       on the object header, no call; a compact ASCII string keeps its characters right after
       the PyASCIIObject header. Every other object takes geomatch_ascii. */
    static inline const unsigned char* geomatch_six(PyObject* o) {
        if (Py_IS_TYPE(o, &PyUnicode_Type) && PyUnicode_IS_COMPACT_ASCII(o)
                && PyUnicode_GET_LENGTH(o) == 6)
            return (const unsigned char*)(((PyASCIIObject*)o) + 1);
        return NULL;
    }

    /* Ask for both cache lines a code's str object may span (header and characters) to be
       brought into L2 only (prefetcht2): the strings of a batch are read once, and L1 is kept
       for the parse tables and the hot part of the bit table (measured: a prefetch into L1
       made match_many about 15% slower). A prefetch never faults. */
    static inline void geomatch_prefetch(PyObject* o) {
        __builtin_prefetch(o, 0, 1);
        __builtin_prefetch(((const char*)o) + sizeof(PyASCIIObject), 0, 1);
    }
    """
    ctypedef struct PyObject
    const char* geomatch_ascii(PyObject* o, Py_ssize_t* length)
    const unsigned char* geomatch_six(PyObject* o) noexcept nogil
    void geomatch_prefetch(PyObject* o) noexcept nogil
    bint PyUnicode_Check(PyObject* o)
    bint PyList_CheckExact(PyObject* o)
    bint PyTuple_CheckExact(PyObject* o)
    PyObject** PySequence_Fast_ITEMS(object o)
    Py_ssize_t PySequence_Fast_GET_SIZE(object o)
    PyObject** _items_of "PySequence_Fast_ITEMS"(PyObject* o) noexcept nogil
    Py_ssize_t _size_of "PySequence_Fast_GET_SIZE"(PyObject* o) noexcept nogil
    object PySequence_Fast(object o, const char* message)

cdef enum:
    C_SAME_SPACE = 1000000
    C_UGC_BASE = 1000000
    C_UGC_PAIRS = 676
    C_ID_SPACE = 2352000
    C_TABLE_BYTES = 294000
    C_PREFETCH_CODES = 128  # codes whose str objects are requested ahead of the one being read

SAME_SPACE = C_SAME_SPACE
UGC_BASE = C_UGC_BASE
UGC_PAIRS = C_UGC_PAIRS
ID_SPACE = C_ID_SPACE
TABLE_BYTES = C_TABLE_BYTES
INVALID_ID = -1


cdef inline bint _is_space(char c) noexcept nogil:
    """Return whether ``c`` is ASCII whitespace (space, tab, LF, VT, FF, CR)."""
    return c == 32 or (c >= 9 and c <= 13)


# _CHARS[pos][byte] is what the byte adds to a code's id at position ``pos`` (bits 0..31), plus
# 1 << 32 when the byte cannot stand there in a SAME code and 1 << 40 when it cannot stand there
# in a UGC code. The sum over six bytes is the id, and a reading is valid when its count of
# misfits is zero. Whether a code is SAME or UGC follows no pattern, so a parse that branches on
# it is mispredicted half the time; six table loads and adds never are.
cdef uint64_t _CHARS[6][256]
cdef uint64_t _NOT_SAME = 1ULL << 32
cdef uint64_t _NOT_UGC = 1ULL << 40
cdef uint32_t[6] _DIGIT_WEIGHT = [100000, 10000, 1000, 100, 10, 1]
cdef uint32_t[2] _LETTER_WEIGHT = [52000, 2000]  # first letter: 26 * 2 * 1000; second: 2 * 1000


cdef void _fill_chars() noexcept nogil:
    """Fill ``_CHARS`` from the id layout."""
    cdef int pos, byte, folded
    cdef uint64_t entry
    for pos in range(6):
        for byte in range(256):
            folded = byte | 0x20  # A-Z onto a-z; no other ASCII byte lands in a..z
            entry = _NOT_SAME | _NOT_UGC
            if 48 <= byte <= 57:
                entry = (byte - 48) * _DIGIT_WEIGHT[pos]
                if pos < 3:
                    entry |= _NOT_UGC
            elif byte < 128 and 97 <= folded <= 122 and pos < 2:
                entry = (folded - 97) * _LETTER_WEIGHT[pos] | _NOT_SAME
                if pos == 0:
                    entry += C_UGC_BASE
            elif pos == 2 and (byte == 90 or byte == 122):  # Z: public, marine, fire zones
                entry = _NOT_SAME
            elif pos == 2 and (byte == 67 or byte == 99):  # C: counties
                entry = 1000 | _NOT_SAME
            _CHARS[pos][byte] = entry


_fill_chars()


cdef inline int32_t _encode6(const unsigned char* s) noexcept nogil:
    """Return the id of the six bytes at ``s``, or -1 when they are not a code."""
    cdef uint64_t total = (
        _CHARS[0][s[0]] + _CHARS[1][s[1]] + _CHARS[2][s[2]]
        + _CHARS[3][s[3]] + _CHARS[4][s[4]] + _CHARS[5][s[5]]
    )
    cdef uint64_t misfits = total >> 32
    cdef uint32_t valid = ((misfits & 0xFF) == 0) | ((misfits >> 8) == 0)
    # valid - 1 is 0 for a code and all ones (-1) otherwise; no branch.
    return <int32_t>(<uint32_t>total | (valid - 1u))


cdef inline int32_t _encode(const char* s, Py_ssize_t n) noexcept nogil:
    """Return the id of the code in ``s[:n]`` (ASCII), or -1 when it is not a code."""
    cdef Py_ssize_t start = 0
    if n == 6:
        # Whitespace is neither a digit nor a letter, so a padded six-character string is
        # rejected here exactly as stripping it first would reject it.
        return _encode6(<const unsigned char*>s)
    while n > 0 and _is_space(s[n - 1]):
        n -= 1
    while start < n and _is_space(s[start]):
        start += 1
    if n - start != 6:
        return -1
    return _encode6(<const unsigned char*>(s + start))


cdef inline int32_t _encode_object(PyObject* item) noexcept:
    """Return the id of a str code, or -1 for an invalid code or a non-str object."""
    cdef const unsigned char* six = geomatch_six(item)
    if six != NULL:
        return _encode6(six)
    return _encode_other(item)


cdef int32_t _encode_other(PyObject* item) noexcept:
    """Return the id of any object that is not an exact compact ASCII str of six characters."""
    cdef Py_ssize_t length = 0
    cdef const char* text = geomatch_ascii(item, &length)
    if text == NULL:
        return -1
    return _encode(text, length)


cdef inline bint _has(const uint8_t* bits, int32_t code) noexcept nogil:
    """Return whether valid id ``code`` is set in the bit table."""
    return (bits[code >> 3] >> (code & 7)) & 1


cdef inline void _add(uint8_t* bits, int32_t code) noexcept nogil:
    """Set valid id ``code`` in the bit table."""
    bits[code >> 3] |= <uint8_t>(1 << (code & 7))


cdef inline void _add_block(uint8_t* bits, int32_t first, int32_t count) noexcept nogil:
    """Set ``count`` ids from ``first``; both are multiples of 8 (blocks of 1000 ids)."""
    memset(bits + (first >> 3), 0xFF, count >> 3)


def encode(code):
    """Return the id of one code (a str), or -1 when it is not a valid SAME or UGC code."""
    return _encode_object(<PyObject*>code)


@cython.boundscheck(False)
@cython.wraparound(False)
def encode_many(codes):
    """Return an int32 array with the id of each code of a sequence, -1 for invalid ones."""
    fast = PySequence_Fast(codes, "codes must be an iterable of str")
    cdef Py_ssize_t n = PySequence_Fast_GET_SIZE(fast)
    cdef PyObject** items = PySequence_Fast_ITEMS(fast)
    out = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] ids = out
    cdef Py_ssize_t i
    for i in range(n):
        ids[i] = _encode_object(items[i])
    return out


cdef object _fast_codes(PyObject* item):
    """Return one alert's geocodes as a list or tuple; a bare str is a TypeError."""
    if PyUnicode_Check(item):
        raise TypeError(
            "each alert's geocodes must be an iterable of code strings, got a single str"
        )
    return PySequence_Fast(<object>item, "each alert's geocodes must be an iterable of str")


cdef struct _Ahead:
    Py_ssize_t alert  # the alert whose codes are requested next
    Py_ssize_t code  # the next code of that alert
    Py_ssize_t codes  # codes requested beyond the end of the alert being read (may be < 0)


cdef inline void _request_ahead(_Ahead* ahead, PyObject* outer) noexcept:
    """Prefetch the str objects of the codes that follow until C_PREFETCH_CODES are requested.

    The strings of many alerts are far apart from the lists that hold them, so reading them
    one by one waits on memory at every code; asking a fixed number of codes ahead (not a
    number of alerts, whose sizes vary) keeps the reads in flight without flooding L2. Only
    alerts given as lists or tuples are looked into. Every size is read again at each step,
    so a list changed by Python code in between (an alert given as a generator may run any)
    is never read out of bounds; a stale count only makes a prefetch useless, never wrong.
    """
    cdef PyObject* item
    cdef PyObject** codes
    cdef Py_ssize_t size, stop, k
    while ahead.codes < C_PREFETCH_CODES and ahead.alert < _size_of(outer):
        item = _items_of(outer)[ahead.alert]
        if PyList_CheckExact(item) or PyTuple_CheckExact(item):
            size = _size_of(item)
            codes = _items_of(item)
            stop = min(size, ahead.code + C_PREFETCH_CODES - ahead.codes)
            for k in range(ahead.code, stop):
                geomatch_prefetch(codes[k])
            if stop > ahead.code:
                ahead.codes += stop - ahead.code
                ahead.code = stop
            if ahead.code < size:
                return
        ahead.alert += 1
        ahead.code = 0


cdef inline void _start_ahead(_Ahead* ahead) noexcept:
    """Point the prefetch cursor at the first code of the first alert."""
    ahead.alert = 0
    ahead.code = 0
    ahead.codes = 0


@cython.boundscheck(False)
@cython.wraparound(False)
def encode_lists(alerts):
    """Return (flat int32 ids, int64 offsets of length n + 1) for a sequence of code lists.

    Alert ``i`` owns ``flat[offsets[i]:offsets[i + 1]]``; invalid codes are left out.
    """
    outer = PySequence_Fast(alerts, "alerts must be an iterable of geocode lists")
    cdef Py_ssize_t n = PySequence_Fast_GET_SIZE(outer)
    cdef Py_ssize_t i, j, m, used = 0, capacity = 16 * n + 16
    cdef int32_t code
    cdef PyObject* item
    cdef PyObject** codes
    cdef _Ahead ahead
    offsets_array = np.empty(n + 1, dtype=np.int64)
    flat_array = np.empty(capacity, dtype=np.int32)
    cdef int64_t[::1] offsets = offsets_array
    cdef int32_t[::1] flat = flat_array
    offsets[0] = 0
    _start_ahead(&ahead)
    for i in range(n):
        if i >= PySequence_Fast_GET_SIZE(outer):
            raise RuntimeError("alerts changed size while being read")
        item = PySequence_Fast_ITEMS(outer)[i]
        if PyList_CheckExact(item) or PyTuple_CheckExact(item):
            inner = <object>item
            ahead.codes -= _size_of(item)
            _request_ahead(&ahead, <PyObject*>outer)
        else:
            inner = _fast_codes(item)
        m = PySequence_Fast_GET_SIZE(inner)
        if used + m > capacity:
            capacity = 2 * (used + m)
            flat_array = np.resize(flat_array, capacity)
            flat = flat_array
        codes = PySequence_Fast_ITEMS(inner)
        for j in range(m):
            code = _encode_object(codes[j])
            if code >= 0:
                flat[used] = code
                used += 1
        offsets[i + 1] = used
    return flat_array[:used].copy(), offsets_array


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _build(
    const int32_t[::1] configured,
    const int16_t[::1] pair_state,
    const int16_t[::1] state_pair,
    uint8_t* bits,
) noexcept nogil:
    """Set the id of every alert code that matches at least one configured id."""
    cdef Py_ssize_t i
    cdef int32_t code, part, state, county, pair, p
    for i in range(configured.shape[0]):
        code = configured[i]
        if code == 0:  # 000000, the whole nation, matches every code
            memset(bits, 0xFF, C_TABLE_BYTES)
            return
        _add(bits, code)
        _add(bits, 0)  # an alert for the whole nation matches any configured code
        if code >= C_UGC_BASE:
            state = pair_state[(code - C_UGC_BASE) // 2000]
            if state > 0:
                _add(bits, state * 1000)  # the whole state of a UGC zone
                county = code % 1000
                if ((code - C_UGC_BASE) // 1000) % 2 == 1 and county != 0:
                    # A UGC county SSCNNN is the SAME county 0FFNNN: it matches that whole
                    # county and, as the whole county does, each of its parts.
                    for p in range(10):
                        _add(bits, p * 100000 + state * 1000 + county)
            continue
        part = code // 100000
        state = (code // 1000) % 100
        county = code % 1000
        if state != 0:
            _add(bits, state * 1000)  # the whole state of a SAME code
        if part == 0 and county == 0 and state != 0:
            # A whole state matches every SAME code and every UGC code of that state.
            for p in range(10):
                _add_block(bits, p * 100000 + state * 1000, 1000)
            pair = state_pair[state]
            if pair >= 0:
                _add_block(bits, C_UGC_BASE + pair * 2000, 2000)
        else:
            if part == 0:
                for p in range(1, 10):  # a whole county matches each of its parts
                    _add(bits, p * 100000 + state * 1000 + county)
            else:
                _add(bits, state * 1000 + county)  # a part matches its whole county
            pair = state_pair[state]
            if county != 0 and pair >= 0:
                # The whole county 0FFNNN is the UGC county SSCNNN, and a part matches it.
                _add(bits, C_UGC_BASE + pair * 2000 + 1000 + county)


@cython.boundscheck(False)
@cython.wraparound(False)
def build_table(
    const int32_t[::1] configured,
    const int16_t[::1] pair_state,
    const int16_t[::1] state_pair,
):
    """Return the uint8 bit table (bit ``id & 7`` of byte ``id >> 3``) of matching alert ids.

    ``configured`` holds valid ids; ``pair_state[L1*26 + L2]`` is the state FIPS number of a UGC
    letter pair (-1 when none, as for marine prefixes) and ``state_pair[SS]`` the letter pair of
    state FIPS ``SS`` (-1 when none).
    """
    cdef Py_ssize_t i
    if pair_state.shape[0] != C_UGC_PAIRS or state_pair.shape[0] != 100:
        raise ValueError("pair_state must hold 676 entries and state_pair 100")
    for i in range(C_UGC_PAIRS):
        if not -1 <= pair_state[i] <= 99:
            raise ValueError(f"pair_state[{i}] must be within -1..99, got {pair_state[i]}")
    for i in range(100):
        if not -1 <= state_pair[i] < C_UGC_PAIRS:
            raise ValueError(f"state_pair[{i}] must be within -1..675, got {state_pair[i]}")
    for i in range(configured.shape[0]):
        if not 0 <= configured[i] < C_ID_SPACE:
            raise ValueError(f"configured[{i}] is not a valid id: {configured[i]}")
    table = np.zeros(C_TABLE_BYTES, dtype=np.uint8)
    cdef uint8_t[::1] view = table
    with nogil:
        _build(configured, pair_state, state_pair, &view[0])
    return table


@cython.boundscheck(False)
@cython.wraparound(False)
cdef const uint8_t* _table_pointer(const uint8_t[::1] table) except NULL:
    """Return the bits of a table after checking its size."""
    if table.shape[0] != C_TABLE_BYTES:
        raise ValueError(f"table must hold {C_TABLE_BYTES} bytes, got {table.shape[0]}")
    return &table[0]


cdef inline bint _any_match(const uint8_t* bits, PyObject** codes, Py_ssize_t m) noexcept:
    """Return whether any of ``m`` code objects is valid and set in the table."""
    cdef Py_ssize_t j
    cdef int32_t code
    for j in range(m):
        code = _encode_object(codes[j])
        if code >= 0 and _has(bits, code):
            return True
    return False


def match_one(const uint8_t[::1] table, codes):
    """Return whether any code of one alert's geocodes is set in the table."""
    cdef const uint8_t* bits = _table_pointer(table)
    fast = _fast_codes(<PyObject*>codes)
    return _any_match(bits, PySequence_Fast_ITEMS(fast), PySequence_Fast_GET_SIZE(fast))


@cython.boundscheck(False)
@cython.wraparound(False)
def match_lists(const uint8_t[::1] table, alerts):
    """Return a bool array: whether each alert's geocodes hold a code set in the table.

    The walk reads Python objects, so it keeps the GIL; each code costs a parse and a bit test.
    """
    cdef const uint8_t* bits = _table_pointer(table)
    outer = PySequence_Fast(alerts, "alerts must be an iterable of geocode lists")
    cdef Py_ssize_t n = PySequence_Fast_GET_SIZE(outer)
    cdef Py_ssize_t i
    cdef PyObject* item
    cdef _Ahead ahead
    out = np.zeros(n, dtype=np.bool_)
    cdef uint8_t[::1] result = out.view(np.uint8)
    _start_ahead(&ahead)
    for i in range(n):
        if i >= PySequence_Fast_GET_SIZE(outer):
            raise RuntimeError("alerts changed size while being read")
        item = PySequence_Fast_ITEMS(outer)[i]
        if PyList_CheckExact(item) or PyTuple_CheckExact(item):
            # No Python code runs while a list or tuple is read, so borrowing is safe.
            ahead.codes -= _size_of(item)
            _request_ahead(&ahead, <PyObject*>outer)
            result[i] = _any_match(bits, _items_of(item), _size_of(item))
        else:
            inner = _fast_codes(item)
            result[i] = _any_match(
                bits, PySequence_Fast_ITEMS(inner), PySequence_Fast_GET_SIZE(inner)
            )
    return out


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _match_csr(
    const uint8_t* bits,
    const int32_t[::1] flat,
    const int64_t[::1] offsets,
    uint8_t[::1] out,
    int64_t* last,
) noexcept nogil:
    """Fill ``out``; return -1, or the first index whose offsets are out of order or range.

    ``last`` has room for len(flat) + 1 entries. Two branch-free passes and no loop per alert
    (alerts hold a few ids each, so a loop per alert mispredicts its exit every time):
    ``last[k]`` is one past the position of the last matching id in ``flat[:k]`` (or the
    first offset when none), and alert ``i`` matches when that position lies past its start.
    """
    cdef Py_ssize_t i, n = out.shape[0]
    cdef int64_t k, low, high, size = flat.shape[0], found
    cdef int32_t code
    cdef uint32_t valid, hit
    if offsets[0] < 0 or offsets[0] > size:
        return 0
    for i in range(n):
        if offsets[i + 1] < offsets[i] or offsets[i + 1] > size:
            return i + 1
    low = offsets[0]
    high = offsets[n]
    found = low
    last[low] = found
    # One unsigned compare drops negative ids (-1 marks an invalid code) and ids past the id
    # space; they test id 0 and are masked off.
    for k in range(low, high):
        code = flat[k]
        valid = <uint32_t>code < C_ID_SPACE
        code = code if valid else 0
        hit = valid & (bits[code >> 3] >> (code & 7))
        found = (k + 1) if hit else found
        last[k + 1] = found
    for i in range(n):
        out[i] = last[offsets[i + 1]] > offsets[i]
    return -1


def match_encoded(
    const uint8_t[::1] table, const int32_t[::1] flat, const int64_t[::1] offsets
):
    """Return a bool array: whether each alert's ids ``flat[offsets[i]:offsets[i+1]]`` match.

    ``offsets`` holds n + 1 non-decreasing entries within 0..len(flat); ids outside the id
    space (such as -1) are ignored. Releases the GIL.
    """
    cdef const uint8_t* bits = _table_pointer(table)
    cdef Py_ssize_t bad
    if offsets.shape[0] < 1:
        raise ValueError("offsets must hold n + 1 entries, got an empty array")
    out = np.zeros(offsets.shape[0] - 1, dtype=np.bool_)
    cdef uint8_t[::1] result = out.view(np.uint8)
    positions = np.empty(flat.shape[0] + 1, dtype=np.int64)
    cdef int64_t[::1] last = positions
    with nogil:
        bad = _match_csr(bits, flat, offsets, result, &last[0])
    if bad >= 0:
        raise ValueError(
            f"offsets[{bad}] = {offsets[bad]} is out of order or outside 0..{flat.shape[0]}"
        )
    return out
