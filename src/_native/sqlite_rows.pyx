# cython: language_level=3
"""Insert many rows through SQLite's C interface, inside the caller's own ``sqlite3`` connection.

The compiled twin of ``executemany`` for ``alertstation.db.bulk.BulkInsert``. Python's ``sqlite3``
driver binds every value of every row through its own machinery; for a row of 25 values that
costs about as much as SQLite's work. Here each value is bound with one C call.

No second SQLite library is ever loaded: the functions are looked up in the ``libsqlite3.so.0``
already loaded for Python's ``sqlite3`` module (``dlopen`` with ``RTLD_NOLOAD``), and
``register`` adds an SQL function, ``alertstation_insert_staged(token)``, to every connection
that library opens from then on (``sqlite3_auto_extension``). ``alertstation.db.staged_insert``
stages the rows with ``stage``, runs ``SELECT alertstation_insert_staged(token)`` on its
connection, in its transaction, and reads back the number of rows inserted (token 0 answers
NULL: a probe for the function). A connection without the function (opened before
``register``, or by a Python whose ``sqlite3`` has SQLite built in) is one the function cannot
reach, and gets ``executemany``. Outside a transaction the rows go in all or none, under a
savepoint of their own.

Values are bound as ``sqlite3`` binds them: None as NULL, True and False as 1 and 0, an int as
a 64-bit integer, a float as a double, a str as UTF-8 text, bytes or another buffer (a
memoryview, as ``sqlite3.Binary`` makes) as a blob. Any other value fails the call with a
``TypeError`` naming its column and row.
"""

cimport cython
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_CheckBuffer, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.float cimport PyFloat_AS_DOUBLE
from libc.stdint cimport int64_t

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL
    bint PyUnicode_CheckExact(object)
    bint PyFloat_CheckExact(object)
    bint PyBool_Check(object)
    bint PyLong_Check(object)
    bint PyFloat_Check(object)
    bint PyUnicode_Check(object)
    bint PyBytes_Check(object)
    long long PyLong_AsLongLong(object) except? -1

cdef extern from "<dlfcn.h>":
    void* dlopen(const char* filename, int flags)
    void* dlsym(void* handle, const char* symbol)
    int RTLD_NOW
    int RTLD_NOLOAD

# SQLite's result codes and constants used here (stable parts of its ABI).
DEF SQLITE_OK = 0
DEF SQLITE_ROW = 100
DEF SQLITE_DONE = 101
DEF SQLITE_ERROR = 1
DEF SQLITE_UTF8 = 1

ctypedef void (*destructor_t)(void*) noexcept nogil
# SQLITE_TRANSIENT: SQLite copies the value before the bind returns.
cdef destructor_t _TRANSIENT = <destructor_t>-1
ctypedef void (*sql_function_t)(void* ctx, int argc, void** argv) noexcept nogil

ctypedef int (*auto_extension_t)(void (*entry)() noexcept nogil) noexcept nogil
ctypedef int (*create_function_t)(
    void* db, const char* name, int args, int text, void* app, sql_function_t func,
    void* step, void* final, void* destroy
) noexcept nogil
ctypedef void* (*context_db_handle_t)(void* ctx) noexcept nogil
ctypedef int64_t (*value_int64_t)(void* value) noexcept nogil
ctypedef void (*result_int64_t)(void* ctx, int64_t value) noexcept nogil
ctypedef void (*result_error_t)(void* ctx, const char* message, int length) noexcept nogil
ctypedef void (*result_error_code_t)(void* ctx, int code) noexcept nogil
ctypedef int (*prepare_t)(
    void* db, const char* sql, int length, void** stmt, const char** tail
) noexcept nogil
ctypedef int (*bind_null_t)(void* stmt, int index) noexcept nogil
ctypedef int (*bind_int64_t)(void* stmt, int index, int64_t value) noexcept nogil
ctypedef int (*bind_double_t)(void* stmt, int index, double value) noexcept nogil
ctypedef int (*bind_text_t)(
    void* stmt, int index, const char* text, int length, destructor_t free
) noexcept nogil
ctypedef int (*bind_blob_t)(
    void* stmt, int index, const void* data, int length, destructor_t free
) noexcept nogil
ctypedef int (*stmt_t)(void* stmt) noexcept nogil
ctypedef int (*changes_t)(void* db) noexcept nogil
ctypedef int (*autocommit_t)(void* db) noexcept nogil
ctypedef const char* (*errmsg_t)(void* db) noexcept nogil
ctypedef int (*extended_errcode_t)(void* db) noexcept nogil
ctypedef int (*exec_t)(
    void* db, const char* sql, void* callback, void* argument, char** error
) noexcept nogil
ctypedef const char* (*libversion_t)() noexcept nogil

cdef auto_extension_t _auto_extension = NULL
cdef create_function_t _create_function = NULL
cdef context_db_handle_t _context_db_handle = NULL
cdef value_int64_t _value_int64 = NULL
cdef result_int64_t _result_int64 = NULL
cdef result_error_t _result_error = NULL
cdef result_error_code_t _result_error_code = NULL
cdef prepare_t _prepare = NULL
cdef bind_null_t _bind_null = NULL
cdef bind_int64_t _bind_int64 = NULL
cdef bind_double_t _bind_double = NULL
cdef bind_text_t _bind_text = NULL
cdef bind_blob_t _bind_blob = NULL
cdef stmt_t _step = NULL
cdef stmt_t _reset = NULL
cdef stmt_t _finalize = NULL
cdef changes_t _changes = NULL
cdef autocommit_t _get_autocommit = NULL
cdef errmsg_t _errmsg = NULL
cdef extended_errcode_t _extended_errcode = NULL
cdef exec_t _exec = NULL
cdef libversion_t _libversion = NULL

cdef bint _registered = False
cdef dict _staged = {}  # token: (sql as UTF-8 bytes, columns (tuples), row count)
cdef dict _failures = {}  # token: the exception that stopped its insert
cdef int64_t _next_token = 0


cdef void* _symbol(void* library, const char* name) except NULL:
    cdef void* found = dlsym(library, name)
    if found == NULL:
        raise OSError(f"libsqlite3.so.0 has no {name.decode()}")
    return found


cdef int _entry(void* db, char** error, const void* api) noexcept nogil:
    return _create_function(
        db, b"alertstation_insert_staged", 1, SQLITE_UTF8, NULL, _insert, NULL, NULL, NULL
    )


def register() -> bool:
    """Add ``alertstation_insert_staged`` to every connection the loaded SQLite library opens
    from now on; return False when Python's ``sqlite3`` uses no shared ``libsqlite3.so.0``."""
    global _registered, _auto_extension, _create_function, _context_db_handle, _value_int64
    global _result_int64, _result_error, _result_error_code, _prepare, _bind_null, _bind_int64
    global _bind_double, _bind_text, _bind_blob, _step, _reset, _finalize
    global _changes, _get_autocommit, _errmsg, _extended_errcode, _exec, _libversion
    if _registered:
        return True
    import sqlite3  # loads libsqlite3.so.0 when the driver links it

    cdef void* library = dlopen(b"libsqlite3.so.0", RTLD_NOW | RTLD_NOLOAD)
    if library == NULL:
        return False
    _libversion = <libversion_t>_symbol(library, b"sqlite3_libversion")
    if _libversion().decode() != sqlite3.sqlite_version:
        return False  # the driver has a SQLite of its own: this library is not the one it uses
    _auto_extension = <auto_extension_t>_symbol(library, b"sqlite3_auto_extension")
    _create_function = <create_function_t>_symbol(library, b"sqlite3_create_function_v2")
    _context_db_handle = <context_db_handle_t>_symbol(library, b"sqlite3_context_db_handle")
    _value_int64 = <value_int64_t>_symbol(library, b"sqlite3_value_int64")
    _result_int64 = <result_int64_t>_symbol(library, b"sqlite3_result_int64")
    _result_error = <result_error_t>_symbol(library, b"sqlite3_result_error")
    _result_error_code = <result_error_code_t>_symbol(library, b"sqlite3_result_error_code")
    _prepare = <prepare_t>_symbol(library, b"sqlite3_prepare_v2")
    _bind_null = <bind_null_t>_symbol(library, b"sqlite3_bind_null")
    _bind_int64 = <bind_int64_t>_symbol(library, b"sqlite3_bind_int64")
    _bind_double = <bind_double_t>_symbol(library, b"sqlite3_bind_double")
    _bind_text = <bind_text_t>_symbol(library, b"sqlite3_bind_text")
    _bind_blob = <bind_blob_t>_symbol(library, b"sqlite3_bind_blob")
    _step = <stmt_t>_symbol(library, b"sqlite3_step")
    _reset = <stmt_t>_symbol(library, b"sqlite3_reset")
    _finalize = <stmt_t>_symbol(library, b"sqlite3_finalize")
    _changes = <changes_t>_symbol(library, b"sqlite3_changes")
    _get_autocommit = <autocommit_t>_symbol(library, b"sqlite3_get_autocommit")
    _errmsg = <errmsg_t>_symbol(library, b"sqlite3_errmsg")
    _extended_errcode = <extended_errcode_t>_symbol(library, b"sqlite3_extended_errcode")
    _exec = <exec_t>_symbol(library, b"sqlite3_exec")
    if _auto_extension(<void (*)() noexcept nogil>_entry) != SQLITE_OK:
        return False
    _registered = True
    return True


def registered() -> bool:
    """Tell whether ``register`` has succeeded."""
    return _registered


def stage(str sql, columns, Py_ssize_t count) -> int:
    """Hold rows for ``alertstation_insert_staged``: ``sql`` an INSERT with one ``?`` for each
    of ``columns`` (each a sequence of ``count`` values); return the token to pass it."""
    global _next_token
    if not _registered:
        raise RuntimeError("sqlite_rows.register() has not succeeded")
    held = tuple(tuple(column) for column in columns)
    for column in held:
        if len(column) != count:
            raise ValueError(f"a column of {len(column)} values for {count} rows")
    _next_token += 1
    _staged[_next_token] = (sql.encode(), held, count)
    return _next_token


def unstage(int64_t token):
    """Drop the rows held for ``token``; raise the exception that stopped their insert, if any."""
    _staged.pop(token, None)
    failure = _failures.pop(token, None)
    if failure is not None:
        raise failure


cdef void _insert(void* ctx, int argc, void** argv) noexcept nogil:
    cdef int64_t token = _value_int64(argv[0])
    with gil:
        _insert_staged(ctx, token)


class _Failed(Exception):
    """SQLite refused a call; its message and code are on the connection."""


cdef int _bind(void* stmt, int index, object value) except -1:
    cdef Py_ssize_t size
    cdef const char* text
    cdef Py_buffer view
    if value is None:
        return _bind_null(stmt, index)
    if PyUnicode_CheckExact(value):
        text = PyUnicode_AsUTF8AndSize(value, &size)
        return _bind_text(stmt, index, text, <int>size, NULL)
    if PyFloat_CheckExact(value):
        return _bind_double(stmt, index, PyFloat_AS_DOUBLE(value))
    if PyBool_Check(value):
        return _bind_int64(stmt, index, 1 if value is True else 0)
    if PyLong_Check(value):
        return _bind_int64(stmt, index, PyLong_AsLongLong(value))
    if PyFloat_Check(value):
        return _bind_double(stmt, index, float(value))
    if PyUnicode_Check(value):
        text = PyUnicode_AsUTF8AndSize(value, &size)
        return _bind_text(stmt, index, text, <int>size, NULL)
    if PyBytes_Check(value):
        return _bind_blob(stmt, index, PyBytes_AS_STRING(value), <int>PyBytes_GET_SIZE(value), NULL)
    if PyObject_CheckBuffer(value):  # memoryview (sqlite3.Binary), bytearray: copied
        PyObject_GetBuffer(value, &view, PyBUF_SIMPLE)
        try:
            return _bind_blob(stmt, index, view.buf, <int>view.len, _TRANSIENT)
        finally:
            PyBuffer_Release(&view)
    raise TypeError(f"cannot store a {type(value).__name__}")


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _insert_staged(void* ctx, int64_t token) noexcept:
    cdef void* db = _context_db_handle(ctx)
    cdef void* stmt = NULL
    cdef int rc
    cdef int code = 0
    cdef Py_ssize_t row, index, width
    cdef int64_t added = 0
    cdef bint savepoint = False
    cdef tuple columns
    cdef tuple column
    if token == 0:  # a probe for the function (``staged_insert.available``)
        return
    staged = _staged.get(token)
    if staged is None:
        _result_error(ctx, b"alertstation_insert_staged: nothing is staged under that token", -1)
        return
    sql, columns, count = staged
    width = len(columns)
    try:
        if _get_autocommit(db):  # not in a transaction: the rows still go in all or none
            rc = _exec(db, b"SAVEPOINT alertstation_insert_staged", NULL, NULL, NULL)
            if rc != SQLITE_OK:
                raise _Failed()
            savepoint = True
        rc = _prepare(db, <const char*>sql, -1, &stmt, NULL)
        if rc != SQLITE_OK:
            raise _Failed()
        for row in range(<Py_ssize_t>count):
            for index in range(width):
                column = <tuple>columns[index]
                try:
                    _bind(stmt, <int>index + 1, column[row])
                except (TypeError, OverflowError) as error:
                    raise type(error)(f"column {index + 1}, row {row + 1}: {error}") from None
            rc = _step(stmt)
            if rc != SQLITE_DONE and rc != SQLITE_ROW:
                raise _Failed()
            added += _changes(db)
            _reset(stmt)
    except _Failed:
        code = _extended_errcode(db)
        _result_error(ctx, _errmsg(db), -1)
    except BaseException as error:
        _failures[token] = error
        code = SQLITE_ERROR
        _result_error(ctx, b"alertstation_insert_staged: the rows could not be bound", -1)
    finally:
        if stmt != NULL:
            _finalize(stmt)
        if savepoint:
            if code:
                _exec(db, b"ROLLBACK TO alertstation_insert_staged", NULL, NULL, NULL)
            _exec(db, b"RELEASE alertstation_insert_staged", NULL, NULL, NULL)
    if code:
        _result_error_code(ctx, code)
    else:
        _result_int64(ctx, added)
