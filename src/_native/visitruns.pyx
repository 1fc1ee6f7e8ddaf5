# cython: language_level=3
"""The visits of a day's rows: the compiled twin of
``alertstation.traffic.tally.py_visit_counts``.

Product code calls ``alertstation.traffic.tally.visit_counts``, which picks this function when it
is built. One pass over rows sorted by visitor and time: the times are compared as C doubles, the
day of a time is found as Python's ``//`` finds it, and a visitor is compared with the row
before's by identity first (rows of one visitor hold the same key object).
"""

cimport cython
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport Py_EQ, PyObject, PyObject_IsTrue, PyObject_RichCompareBool
from libc.math cimport copysign, floor, fmod


cdef inline double _floor_div(double a, double b):
    """``a // b`` for floats, step by step as Python computes it."""
    cdef double mod = fmod(a, b)
    cdef double div = (a - mod) / b
    cdef double whole
    if mod != 0.0 and ((b < 0.0) != (mod < 0.0)):
        div -= 1.0
    if div != 0.0:
        whole = floor(div)
        if div - whole > 0.5:
            whole += 1.0
        return whole
    return copysign(0.0, a / b)


cdef inline void _count(dict counts, object path):
    cdef PyObject* found = PyDict_GetItem(counts, path)
    PyDict_SetItem(counts, path, (<object>found if found != NULL else 0) + 1)


@cython.boundscheck(False)
@cython.wraparound(False)
def visit_counts(list keys, list times, list paths, list views, double gap, double day):
    """Return ``(visits, bounces, seconds, entries, exits)`` of rows sorted by visitor and
    time (see ``py_visit_counts``)."""
    cdef Py_ssize_t count = PyList_GET_SIZE(keys)
    if PyList_GET_SIZE(times) != count or PyList_GET_SIZE(paths) != count or (
        PyList_GET_SIZE(views) != count
    ):
        raise ValueError(
            f"{count} visitors, {len(times)} times, {len(paths)} paths and {len(views)} views"
        )
    if day == 0.0 and count:
        raise ZeroDivisionError("float floor division by zero")
    cdef Py_ssize_t row, requests = 0, visits = 0, bounces = 0
    cdef double ts, start = 0.0, last = 0.0, seconds = 0.0, last_day = 0.0, this_day
    cdef object key, visitor = None, entry = None, exit_page = None, path
    cdef dict entries = {}, exits = {}
    for row in range(count + 1):  # the row after the last ends the last visit
        if row < count:
            key = <object>PyList_GET_ITEM(keys, row)
            ts = <double><object>PyList_GET_ITEM(times, row)
            this_day = _floor_div(ts, day)
        if (
            row == count
            or not (key is visitor or PyObject_RichCompareBool(key, visitor, Py_EQ))
            or ts - last > gap
            or this_day != last_day
        ):
            if requests:  # the visit before ends
                visits += 1
                bounces += requests == 1
                seconds += last - start
                if entry is not None:
                    _count(entries, entry)
                    _count(exits, exit_page)
            if row == count:
                break
            visitor, start, requests, entry, exit_page = key, ts, 0, None, None
        requests += 1
        last, last_day = ts, this_day
        if PyObject_IsTrue(<object>PyList_GET_ITEM(views, row)):
            path = <object>PyList_GET_ITEM(paths, row)
            exit_page = path
            if entry is None:
                entry = path
    return visits, bounces, seconds, entries, exits
