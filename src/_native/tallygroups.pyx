# cython: language_level=3
"""Hits, bytes and distinct visitors per distinct key of many rows (a tally's profiles).

The compiled twin of ``alertstation.traffic.tally.py_profile_tallies``: the same keys, hits,
byte totals and visitor ids. Product code calls ``alertstation.traffic.tally.profile_tallies``,
which picks this function when it is built.

One pass over the rows builds each row's key (a tuple of its values in the given columns) and
finds its number in a dict, or takes the number of the row before when the row holds the very
objects that row holds (rows sorted by visitor repeat their values in runs); it adds to C arrays
of hits and bytes. Each (key number, visitor) pair goes into one array of 64-bit integers, once
for each run of a visitor's rows under the key, and the array is then sorted, so each key's
distinct visitors come out in order, ready for a bitmap.
"""

cimport cython
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport qsort
from libc.string cimport memset


cdef int _compare(const void* a, const void* b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t*>a)[0]
    cdef uint64_t y = (<const uint64_t*>b)[0]
    return (x > y) - (x < y)


cdef inline bint _as_before(list lists, Py_ssize_t width, Py_ssize_t row):
    """Whether each column holds at ``row`` the very object it holds at the row before: then
    the row's key is that row's, found without a tuple or a dict lookup."""
    cdef Py_ssize_t place
    cdef list column
    for place in range(width):
        column = <list>PyList_GET_ITEM(lists, place)
        if PyList_GET_ITEM(column, row) != PyList_GET_ITEM(column, row - 1):
            return False
    return True


@cython.boundscheck(False)
@cython.wraparound(False)
def profile_tallies(columns, list visitors, list sizes):
    """Return ``[(key, hits, bytes, visitors)]`` for each distinct key, in order of first
    appearance: ``key`` the tuple of a row's values in ``columns`` (sequences of equal length),
    ``visitors`` the sorted distinct ids (ints below 2**32) of ``visitors`` among its rows, and
    ``bytes`` the sum of ``sizes`` (ints, 0 for none) over them."""
    columns = [column if type(column) is list else list(column) for column in columns]
    cdef Py_ssize_t count = PyList_GET_SIZE(visitors)
    cdef Py_ssize_t width = len(columns)
    cdef Py_ssize_t row, place, number, start, end
    cdef int64_t* hits = NULL
    cdef int64_t* spent = NULL
    cdef uint64_t* pairs = NULL
    cdef uint64_t* last = NULL
    cdef Py_ssize_t taken = 0
    cdef uint64_t visitor
    cdef PyObject* found
    cdef list lists = columns
    cdef list keys = []
    cdef dict numbers = {}
    cdef tuple key
    cdef object value
    if width == 0:
        raise ValueError("no columns to key the rows by")
    if PyList_GET_SIZE(sizes) != count:
        raise ValueError(f"{PyList_GET_SIZE(sizes)} sizes for {count} visitors")
    for column in columns:
        if len(column) != count:
            raise ValueError(f"a column of {len(column)} values for {count} rows")
    if count == 0:
        return []
    hits = <int64_t*>PyMem_Malloc(count * sizeof(int64_t))
    spent = <int64_t*>PyMem_Malloc(count * sizeof(int64_t))
    pairs = <uint64_t*>PyMem_Malloc(count * sizeof(uint64_t))
    last = <uint64_t*>PyMem_Malloc(count * sizeof(uint64_t))
    if hits == NULL or spent == NULL or pairs == NULL or last == NULL:
        PyMem_Free(hits)
        PyMem_Free(spent)
        PyMem_Free(pairs)
        PyMem_Free(last)
        raise MemoryError()
    try:
        memset(hits, 0, count * sizeof(int64_t))
        memset(spent, 0, count * sizeof(int64_t))
        memset(last, 0xFF, count * sizeof(uint64_t))  # no visitor yet: ids are below 2**32
        number = -1
        for row in range(count):
            if row == 0 or not _as_before(lists, width, row):
                key = PyTuple_New(width)
                for place in range(width):
                    value = <object>PyList_GET_ITEM(<list>PyList_GET_ITEM(lists, place), row)
                    Py_INCREF(value)
                    PyTuple_SET_ITEM(key, place, value)
                found = PyDict_GetItem(numbers, key)
                if found == NULL:
                    number = len(keys)
                    PyDict_SetItem(numbers, key, number)
                    keys.append(key)
                else:
                    number = <Py_ssize_t><object>found
            hits[number] += 1
            spent[number] += <int64_t><object>PyList_GET_ITEM(sizes, row)
            visitor = <uint32_t><object>PyList_GET_ITEM(visitors, row)
            if last[number] != visitor:  # a visitor's rows for a key, in a run, give one pair
                last[number] = visitor
                pairs[taken] = (<uint64_t>number << 32) | visitor
                taken += 1
        qsort(pairs, taken, sizeof(uint64_t), _compare)
        result = []
        start = 0
        while start < taken:
            number = <Py_ssize_t>(pairs[start] >> 32)
            seen = []
            end = start
            while end < taken and <Py_ssize_t>(pairs[end] >> 32) == number:
                if end == start or pairs[end] != pairs[end - 1]:
                    seen.append(<uint32_t>(pairs[end] & 0xFFFFFFFF))
                end += 1
            result.append((keys[number], hits[number], spent[number], seen))
            start = end
        return result  # key numbers are given in order of first appearance
    finally:
        PyMem_Free(hits)
        PyMem_Free(spent)
        PyMem_Free(pairs)
        PyMem_Free(last)

