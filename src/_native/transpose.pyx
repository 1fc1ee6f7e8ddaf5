# cython: language_level=3
"""Rows into columns: the compiled twin of ``alertstation.db.columns.py_transpose``.

Product code calls ``alertstation.db.columns.transpose``, which picks this function when it is
built. ``zip(*rows)`` reads the rows column by column, visiting every row once per column, so a
wide batch of rows is read from memory as many times as it has columns; this kernel visits each
row once and writes its values into the columns' own arrays.
"""

cimport cython
from cpython.list cimport PyList_New
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.sequence cimport PySequence_Fast, PySequence_Fast_GET_SIZE, PySequence_Fast_ITEMS
from libc.stdlib cimport free, malloc


cdef extern from "Python.h":
    ctypedef struct PyListObject:
        PyObject** ob_item


@cython.boundscheck(False)
@cython.wraparound(False)
def transpose(rows, Py_ssize_t width):
    """Return ``width`` lists, the i-th holding the i-th value of every row of ``rows`` (a
    sequence of sequences of ``width`` values each), in order. ValueError names the first row
    of another length."""
    if width < 0:
        raise ValueError(f"a width of {width} columns")
    cdef object fast_rows = PySequence_Fast(rows, "rows must be a sequence of rows")
    cdef Py_ssize_t count = PySequence_Fast_GET_SIZE(fast_rows)
    cdef PyObject** row_items = PySequence_Fast_ITEMS(fast_rows)
    cdef list columns = [PyList_New(count) for _ in range(width)]
    cdef PyObject*** targets = <PyObject***>malloc((width or 1) * sizeof(PyObject**))
    cdef Py_ssize_t r, c, size
    cdef PyObject** values
    cdef PyObject* value
    cdef object row, fast_row
    if targets == NULL:
        raise MemoryError()
    try:
        for c in range(width):
            targets[c] = (<PyListObject*>columns[c]).ob_item
        for r in range(count):
            row = <object>row_items[r]
            if isinstance(row, (list, tuple)):
                fast_row = row
            else:  # reading it may run any code, even code that changes ``rows``
                fast_row = PySequence_Fast(row, "each row must be a sequence")
                if PySequence_Fast_GET_SIZE(fast_rows) != count:
                    raise RuntimeError("the rows changed while they were read")
                row_items = PySequence_Fast_ITEMS(fast_rows)
            size = PySequence_Fast_GET_SIZE(fast_row)
            if size != width:
                # The columns' later items are still empty (NULL), which a list may hold until
                # it is freed: they are dropped with the error.
                raise ValueError(f"row {r} has {size} values, not {width}")
            values = PySequence_Fast_ITEMS(fast_row)
            for c in range(width):
                value = values[c]
                Py_INCREF(<object>value)
                targets[c][r] = value
    finally:
        free(targets)
    return columns
