# cython: language_level=3
"""The request recorder's request side, compiled: what ``TrafficMiddleware`` runs per request.

The compiled twin of ``alertstation.traffic.recorder.PyTap``: the same rules in the same order,
the same fields queued, the same callbacks for the rare paths (an address not seen yet, the bot
test, masking, a body that is not plain bytes, a full buffer, the flusher's start, an error).
Product code builds the tap through ``alertstation.traffic.recorder``, which picks this class
when it is built.

What it saves over the Python twin is interpreter work: the clocks are read with
``clock_gettime`` when they are the system's (``time.monotonic`` and ``time.time`` are the same
calls), the environ lookups are plain dict lookups, the row tuple is built in C, and the slots of
Falcon's own ``Request`` and ``Response`` (``path``, ``env``, ``status``...) are read at their
offsets, found once from the classes' slot descriptors (an object of any other class, or a slot
left empty, is read as an attribute).
"""

cimport cython
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from libc.time cimport timespec

import time as _time
import types as _types


cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void* op)
    ctypedef struct PyMemberDef:
        Py_ssize_t offset
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member


cdef extern from "<time.h>" nogil:
    ctypedef int clockid_t
    int clock_gettime(clockid_t clock_id, timespec *tp)
    clockid_t CLOCK_MONOTONIC
    clockid_t CLOCK_REALTIME


cdef str _API_PREFIX = "/api/"
cdef str _API_ROOT = "/api"


cdef inline double _clock(clockid_t which) noexcept:
    cdef timespec spec
    clock_gettime(which, &spec)
    return <double>spec.tv_sec + <double>spec.tv_nsec * 1e-9


cdef inline object _get(dict mapping, object key):
    """``mapping.get(key)``, without the method call."""
    cdef PyObject* found = PyDict_GetItem(mapping, key)
    if found is NULL:
        return None
    return <object>found


cdef Py_ssize_t _slot_offset(object cls, str name):
    """The offset of slot ``name`` in instances of ``cls``; -1 when it is not a plain slot."""
    if cls is None:
        return -1
    for klass in cls.__mro__:
        found = klass.__dict__.get(name)
        if found is not None:
            if type(found) is not _types.MemberDescriptorType:
                return -1
            return (<PyMemberDescrObject*>found).d_member.offset
    return -1


cdef inline object _slot(object obj, Py_ssize_t offset, str name):
    """Attribute ``name`` of ``obj`` at its slot's ``offset`` (-1: read as an attribute)."""
    cdef PyObject* value
    if offset >= 0:
        value = (<PyObject**>((<char*><PyObject*>obj) + offset))[0]
        if value is not NULL:
            return <object>value
    return getattr(obj, name)


@cython.final
cdef class Tap:
    """Decide whether a request is recorded and queue its fields (see ``PyTap``)."""

    cdef object cache
    cdef object monotonic
    cdef bint system_monotonic
    cdef object now
    cdef bint system_now
    cdef object recorder
    cdef object pending
    cdef object append
    cdef double valid_until
    cdef object rules
    cdef Py_ssize_t last_length
    cdef object last_length_object
    cdef object __weakref__
    cdef Py_ssize_t capacity
    cdef Py_ssize_t batch
    cdef dict internal
    cdef object is_internal
    cdef object is_bot
    cdef object mask
    cdef object body_length
    cdef object perf_counter
    cdef object on_error
    cdef type plain_request
    cdef Py_ssize_t req_context, req_path, req_env, req_method
    cdef type plain_response
    cdef Py_ssize_t resp_stream, resp_text, resp_data, resp_status

    def __init__(
        self,
        cache,
        monotonic,
        now,
        recorder,
        pending,
        dict internal,
        is_internal,
        is_bot,
        mask,
        body_length,
        perf_counter,
        on_error,
        type plain_request=None,
        type plain_response=None,
    ):
        self.cache = cache
        self.monotonic = monotonic
        self.system_monotonic = monotonic is _time.monotonic
        self.now = now
        self.system_now = now is _time.time
        self.recorder = recorder
        self.pending = pending
        self.append = pending.append
        self.capacity = recorder.capacity
        self.batch = recorder.batch
        self.internal = internal
        self.is_internal = is_internal
        self.is_bot = is_bot
        self.mask = mask
        self.body_length = body_length
        self.perf_counter = perf_counter
        self.on_error = on_error
        self.plain_request = plain_request
        self.req_context = _slot_offset(plain_request, "context")
        self.req_path = _slot_offset(plain_request, "path")
        self.req_env = _slot_offset(plain_request, "env")
        self.req_method = _slot_offset(plain_request, "method")
        self.plain_response = plain_response
        self.resp_stream = _slot_offset(plain_response, "stream")
        self.resp_text = _slot_offset(plain_response, "text")
        self.resp_data = _slot_offset(plain_response, "_data")
        self.resp_status = _slot_offset(plain_response, "status")
        self.valid_until = float("-inf")  # asks the cache on the first request
        self.rules = None
        self.last_length = -1
        self.last_length_object = None
        cache.follow(self)

    def follow(self, state):
        """Take the settings cache's ``state`` (the cache hands each new one to its taps)."""
        self.valid_until = state[0]
        self.rules = state[2]

    def process_response(self, req, resp, resource, req_succeeded):
        """Falcon's response hook: queue the request's fields when the settings record it."""
        try:
            self._observe(req, resp)
        except Exception as ex:  # recording must never fail a request
            self.on_error(ex)

    cdef _observe(self, req, resp):
        cdef double clock_now
        if self.system_monotonic:
            clock_now = _clock(CLOCK_MONOTONIC)
        else:
            clock_now = self.monotonic()
        if clock_now >= self.valid_until:
            self.cache.get()  # hands its state to this tap
            self.follow(self.cache.state)
        rules = self.rules
        if rules is None:
            return  # collection off
        cdef tuple plan = <tuple?>rules
        cdef bint plain = type(req) is self.plain_request
        # should_record's rules. The request context's attributes are read with a default (a
        # missing one raises nothing, and the context's attribute dict is not built).
        context = _slot(req, self.req_context if plain else -1, "context")
        cdef bint signed_in = getattr(context, "user", None) is not None
        if plan[0] and not signed_in:  # authenticated_only
            return
        cdef str path = <str?>_slot(req, self.req_path if plain else -1, "path")
        if not plan[1] and (path.startswith(_API_PREFIX) or path == _API_ROOT):
            return  # API calls, unless log_api_requests
        skip_paths = plan[2]
        if skip_paths and path.startswith(skip_paths):
            return
        cdef dict env = <dict?>_slot(req, self.req_env if plain else -1, "env")
        client_ip = getattr(context, "client_ip", None)
        if not client_ip:
            client_ip = env.get("REMOTE_ADDR", "127.0.0.1") or "0.0.0.0"
        if plan[3]:  # exclude_internal
            internal = _get(self.internal, client_ip)
            if internal is None:
                internal = self.is_internal(client_ip)
            if internal:
                return
        user_agent = _get(env, "HTTP_USER_AGENT")
        if plan[4] and user_agent and self.is_bot(user_agent):  # exclude_bots
            return
        if plan[5]:  # anonymize_ip
            client_ip = self.mask(client_ip)
        started = getattr(context, "started", None)
        if type(resp) is self.plain_response:
            stream = _slot(resp, self.resp_stream, "stream")
            text = _slot(resp, self.resp_text, "text")
            data = _slot(resp, self.resp_data, "_data")
            status = _slot(resp, self.resp_status, "status")
        else:
            stream = resp.stream
            text = resp.text
            data = resp.data if stream is None and text is None else None
            status = resp.status
        cdef Py_ssize_t size
        if stream is None and text is None and data is not None:
            size = len(data)
            if size != self.last_length:  # pages repeat their sizes: the int is kept
                self.last_length_object = size
                self.last_length = size
            length = self.last_length_object
        else:
            length = self.body_length(resp)
        recorder = self.recorder
        pending = self.pending
        cdef Py_ssize_t waiting = len(pending)
        if waiting >= self.capacity:
            recorder.count_dropped()
            return
        ts = _clock(CLOCK_REALTIME) if self.system_now else self.now()
        host = _get(env, "HTTP_HOST")
        if not host:
            host = _get(env, "SERVER_NAME")
        cdef tuple row = (
            ts,
            _slot(req, self.req_method if plain else -1, "method"),
            path,
            status,
            (self.perf_counter() - started) * 1000 if started else None,
            length,
            client_ip,
            user_agent,
            _get(env, "HTTP_REFERER"),
            _get(env, "HTTP_ACCEPT_LANGUAGE"),
            signed_in,
            host,
        )
        # Nothing in it refers back to it: the collector need not visit it while it waits.
        PyObject_GC_UnTrack(<void*>row)
        self.append(row)
        if waiting + 1 == self.batch:
            recorder._wake.set()
        # Is the flusher running here (a forked child starts its own)? Asked every 64 rows.
        if waiting & 63 == 0 and not recorder._running:
            recorder._start()
