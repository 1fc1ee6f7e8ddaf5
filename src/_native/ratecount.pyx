# cython: language_level=3
"""Per-address request counts over a sliding window, in bounded memory (the flood counter).

The compiled twin of ``alertstation.security.autoban.counter.PyRateCounter``: same slices, same
least-recently-active eviction, same batches, same results. Product code imports
``RateCounter`` from ``alertstation.security.autoban.counter``, which picks this class when it
is built.

Each address has one ``_State`` object (C fields, and a C array of per-slice counts) found
through a dict, and the states form a doubly linked list in least-recently-active order, so
moving one to the end and dropping the oldest are O(1) without an OrderedDict. A C lock makes
each call atomic: a dict insert can start a garbage collection that runs arbitrary Python code,
so the GIL alone would not keep another thread out halfway through an update.
"""

cimport cython
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.pythread cimport (
    NOWAIT_LOCK,
    WAIT_LOCK,
    PyThread_acquire_lock,
    PyThread_allocate_lock,
    PyThread_free_lock,
    PyThread_release_lock,
    PyThread_type_lock,
)
from libc.stdint cimport int64_t
from libc.string cimport memset


@cython.final
@cython.freelist(64)
cdef class _State:
    """One address: its current slice, total, pending batch, slice counts and list links."""

    cdef int64_t tick
    cdef int64_t total
    cdef int64_t pending
    cdef double pending_since
    cdef int64_t* counts
    cdef object address
    cdef _State prev
    cdef _State next

    def __dealloc__(self):
        PyMem_Free(self.counts)


@cython.final
cdef class RateCounter:
    """Per-address request counts over a sliding window, with a cap on the addresses kept."""

    cdef readonly double window
    cdef double _per_slice
    cdef int64_t _slices
    cdef int64_t _batch
    cdef Py_ssize_t _capacity
    cdef dict _states
    cdef _State _head  # least recently active
    cdef _State _tail  # most recently active
    cdef PyThread_type_lock _lock

    def __cinit__(self):
        self._lock = PyThread_allocate_lock()
        if self._lock == NULL:
            raise MemoryError("could not allocate the counter's lock")

    def __init__(
        self,
        double window,
        *,
        Py_ssize_t batch=0,
        Py_ssize_t slices=10,
        Py_ssize_t capacity=10_000,
    ):
        if not window > 0:
            raise ValueError(f"window must be positive, got {window}")
        if slices < 1 or capacity < 1 or batch < 0:
            raise ValueError("slices and capacity must be at least 1, batch at least 0")
        self.window = window
        self._per_slice = slices / window
        self._slices = slices
        self._batch = batch
        self._capacity = capacity
        self._states = {}

    def __dealloc__(self):
        if self._lock != NULL:
            PyThread_free_lock(self._lock)

    def __len__(self):
        return len(self._states)

    @property
    def batch(self):
        """Return the batch size (0: no batches)."""
        return self._batch

    @property
    def capacity(self):
        """Return the most addresses kept at once."""
        return self._capacity

    cdef inline void _acquire(self) noexcept:
        if not PyThread_acquire_lock(self._lock, NOWAIT_LOCK):
            with nogil:  # let the holder run while we wait
                PyThread_acquire_lock(self._lock, WAIT_LOCK)

    cdef inline int64_t _tick(self, double now) noexcept:
        return <int64_t>(now * self._per_slice)  # truncates toward zero, like int()

    cdef inline void _unlink(self, _State state) noexcept:
        if state.prev is None:
            self._head = state.next
        else:
            state.prev.next = state.next
        if state.next is None:
            self._tail = state.prev
        else:
            state.next.prev = state.prev
        state.prev = None
        state.next = None

    cdef inline void _append(self, _State state) noexcept:
        state.prev = self._tail
        state.next = None
        if self._tail is None:
            self._head = state
        else:
            self._tail.next = state
        self._tail = state

    @cython.cdivision(True)
    cdef inline void _advance(self, _State state, int64_t tick) noexcept:
        cdef int64_t last = state.tick
        cdef int64_t slices = self._slices
        cdef int64_t index
        if tick - last >= slices or tick < last:  # all slices stale (or the clock went back)
            memset(state.counts, 0, slices * sizeof(int64_t))
            state.total = 0
        else:
            while last < tick:
                last += 1
                index = last % slices
                if index < 0:
                    index += slices
                state.total -= state.counts[index]
                state.counts[index] = 0
        state.tick = tick

    cdef _State _new_state(self, object address, int64_t tick, double now):
        cdef _State state = _State.__new__(_State)
        state.counts = <int64_t*>PyMem_Malloc(self._slices * sizeof(int64_t))
        if state.counts == NULL:
            raise MemoryError()
        memset(state.counts, 0, self._slices * sizeof(int64_t))
        state.tick = tick
        state.pending_since = now
        state.address = address
        return state

    @cython.cdivision(True)
    def hit(self, str address, double now):
        """Count one request from ``address`` at ``now`` (seconds).

        Return the requests from the address within the window, this one included, and, when
        this request completed a batch, the time of the batch's first request (else None).
        """
        cdef int64_t tick = self._tick(now)
        cdef int64_t index
        cdef _State state, oldest
        cdef object started = None
        self._acquire()
        try:
            state = <_State>self._states.get(address)
            if state is None:
                if len(self._states) >= self._capacity:
                    oldest = self._head
                    self._unlink(oldest)
                    del self._states[oldest.address]
                state = self._new_state(address, tick, now)
                self._states[address] = state
                self._append(state)
            elif state.tick != tick:
                self._advance(state, tick)
                if state is not self._tail:
                    self._unlink(state)
                    self._append(state)
            index = tick % self._slices
            if index < 0:
                index += self._slices
            state.counts[index] += 1
            state.total += 1
            if self._batch:
                if not state.pending or now - state.pending_since >= self.window:
                    state.pending_since = now  # a batch must fill within one window
                    state.pending = 0
                state.pending += 1
                if state.pending >= self._batch:
                    state.pending = 0
                    started = state.pending_since
            return state.total, started
        finally:
            PyThread_release_lock(self._lock)

    def count(self, str address, double now):
        """Return the requests from ``address`` within the window at ``now``; counts nothing."""
        cdef int64_t tick = self._tick(now)
        cdef _State state
        self._acquire()
        try:
            state = <_State>self._states.get(address)
            if state is None:
                return 0
            if state.tick != tick:
                self._advance(state, tick)
            return state.total
        finally:
            PyThread_release_lock(self._lock)

    def forget(self, str address):
        """Drop everything known about ``address`` (after it was banned or found exempt)."""
        cdef _State state
        self._acquire()
        try:
            state = <_State>self._states.pop(address, None)
            if state is not None:
                self._unlink(state)
        finally:
            PyThread_release_lock(self._lock)
