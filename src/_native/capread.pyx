# cython: language_level=3
"""Read a CAP ``<alert>`` document's raw fields straight from its bytes, in one expat pass.

The compiled twin of ``alertstation.alerts.cap.read_fields``: the same nested dict of stripped
texts, lists and ``(valueName, value)`` pairs, read from the bytes instead of an lxml tree.
Product code calls it through ``alertstation.alerts.capfast``, which decides when it may.

The parser is the expat that Python's own ``pyexpat`` module is built with, reached through the
C API that module exports for other extensions (``pyexpat.expat_CAPI``), so no second copy of
expat is linked. ``read`` answers ``None`` (and the caller takes the full path) for anything it
does not read exactly as that path would:

- a document type declaration (refused by the full path), or the bytes ``<!DOCTYPE`` anywhere;
- malformed XML, an encoding expat cannot decode by itself, a namespace error;
- a root element that is not a CAP 1.2 or 1.1 ``<alert>``;
- an XML signature anywhere (it is checked on the lxml tree);
- nesting deeper than ``MAX_DEPTH`` or a name longer than ``MAX_NAME`` bytes (libxml2, which
  the full path parses with, has limits of its own there).
"""

cimport cython
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.pycapsule cimport PyCapsule_Import
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport memcpy, strcmp, strlen, strncmp

ctypedef void* XMLParser
ctypedef void (*StartHandler)(void*, const char*, const char**) noexcept
ctypedef void (*EndHandler)(void*, const char*) noexcept
ctypedef void (*CharHandler)(void*, const char*, int) noexcept
ctypedef void (*DoctypeHandler)(void*, const char*, const char*, const char*, int) noexcept


cdef struct ExpatCAPI:
    # The layout of CPython's ``struct PyExpat_CAPI`` (Include/pyexpat.h, "1.1"), up to the
    # last member used here. Checked against the capsule's magic and size before use.
    char* magic
    int size
    int MAJOR_VERSION
    int MINOR_VERSION
    int MICRO_VERSION
    void* ErrorString
    void* GetErrorCode
    void* GetErrorColumnNumber
    void* GetErrorLineNumber
    int (*Parse)(XMLParser, const char*, int, int) noexcept
    XMLParser (*ParserCreate_MM)(const char*, const void*, const char*) noexcept
    void (*ParserFree)(XMLParser) noexcept
    void (*SetCharacterDataHandler)(XMLParser, CharHandler) noexcept
    void* SetCommentHandler
    void* SetDefaultHandlerExpand
    void (*SetElementHandler)(XMLParser, StartHandler, EndHandler) noexcept
    void* SetNamespaceDeclHandler
    void* SetProcessingInstructionHandler
    void* SetUnknownEncodingHandler
    void (*SetUserData)(XMLParser, void*) noexcept
    void (*SetStartDoctypeDeclHandler)(XMLParser, DoctypeHandler) noexcept
    void* SetEncoding
    void* DefaultUnknownEncodingHandler
    int (*SetHashSalt)(XMLParser, unsigned long) noexcept


cdef enum:
    MAX_DEPTH = 64
    MAX_NAME = 1024
    CHUNK = 65536  # bytes fed to expat at a time: a declined body is not read to its end

# What an element is to the reader.
cdef enum Kind:
    SKIPPED = 0  # nothing inside is read
    ALERT = 1
    INFO = 2
    AREA = 3
    PAIR = 4  # eventCode, parameter, geocode: a valueName and a value
    TEXT = 5  # its text is being collected

# Where a collected text goes.
cdef enum Sink:
    ONE = 0  # fields[name] = text
    LIST = 1  # fields[name].append(text)
    PAIR_NAME = 2
    PAIR_VALUE = 3

cdef const char* CAP12 = b"urn:oasis:names:tc:emergency:cap:1.2"
cdef const char* CAP11 = b"urn:oasis:names:tc:emergency:cap:1.1"
cdef const char* SIGNATURE = b"http://www.w3.org/2000/09/xmldsig#}Signature"
cdef const char* SEPARATOR = b"}"

cdef ExpatCAPI* _capi = NULL
cdef unsigned long _salt = 0


def _load() -> str:
    """Find pyexpat's C API; return "" when usable, otherwise why not."""
    global _capi, _salt
    import os

    capi = <ExpatCAPI*>PyCapsule_Import(b"pyexpat.expat_CAPI", 0)
    if strcmp(capi.magic, b"pyexpat.expat_CAPI 1.1") != 0:
        return f"pyexpat C API {capi.magic.decode(errors='replace')!r} is not version 1.1"
    if capi.size < <int>sizeof(ExpatCAPI):
        return f"pyexpat C API is {capi.size} bytes, fewer than the {sizeof(ExpatCAPI)} read"
    _capi = capi
    _salt = int.from_bytes(os.urandom(8), "little")
    return ""


#: Why the reader is unusable ("" when it is usable): checked once, at import.
UNUSABLE: str = _load()


cdef int _index(const char* name, tuple names) except -2:
    """Return the position of ``name`` in ``names`` (a tuple of bytes), or -1."""
    cdef Py_ssize_t i
    for i in range(len(names)):
        if strcmp(name, <const char*>(<bytes>names[i])) == 0:
            return i
    return -1


@cython.final
cdef class _Table:
    """The fields of one element kind (alert, info, area) by local name, and its child kind."""

    cdef tuple one, one_b  # single fields: the field names, and the same as UTF-8 bytes
    cdef tuple texts, texts_b  # repeated texts
    cdef tuple pairs, pairs_b  # repeated (valueName, value) pairs
    cdef bytes child  # the repeated child element with fields of its own, or b""
    cdef int child_kind

    def __init__(self, tuple one, tuple texts, tuple pairs, str child="", int child_kind=0):
        self.one, self.texts, self.pairs = one, texts, pairs
        self.one_b, self.texts_b, self.pairs_b = [
            tuple(name.encode() for name in names) for names in (one, texts, pairs)
        ]
        self.child, self.child_kind = child.encode(), child_kind


# The field names of cap.read_fields, by the element they sit in.
cdef _Table _ALERT = _Table(
    ("identifier", "sender", "sent", "status", "msgType", "scope", "references", "note",
     "incidents"), (), (), "info", INFO
)
cdef _Table _INFO = _Table(
    ("language", "event", "urgency", "severity", "certainty", "effective", "onset", "expires",
     "senderName", "headline", "description", "instruction", "web"),
    ("category", "responseType"), ("eventCode", "parameter"), "area", AREA
)
cdef _Table _AREA = _Table(("areaDesc",), ("polygon", "circle"), ("geocode",))


@cython.final
cdef class _Reader:
    cdef int depth
    cdef bint declined
    cdef int kinds[MAX_DEPTH + 1]
    cdef list frames  # per depth: the dict of an alert, info or area; else None
    cdef const char* namespace
    cdef size_t namespace_length
    # The text being collected: from which depth, to where, and its bytes so far.
    cdef int text_depth
    cdef Sink sink
    cdef object sink_target
    cdef object sink_name
    cdef char* buffer
    cdef size_t length
    cdef size_t capacity
    # The pair being read, and the list it goes to.
    cdef object pair_name
    cdef object pair_value
    cdef object pair_fields
    cdef object pair_key
    cdef dict root

    def __cinit__(self):
        self.frames = [None] * (MAX_DEPTH + 1)
        self.capacity = 256
        self.buffer = <char*>PyMem_Malloc(self.capacity)
        if self.buffer == NULL:
            raise MemoryError()

    def __dealloc__(self):
        PyMem_Free(self.buffer)

    cdef int start(self, const char* name) except -1:
        cdef int depth = self.depth + 1
        cdef int parent
        cdef const char* local
        cdef dict fields
        self.depth = depth
        if depth > MAX_DEPTH or strlen(name) > MAX_NAME or strcmp(name, SIGNATURE) == 0:
            self.declined = True
            return 0
        if self.text_depth:
            self.kinds[depth] = SKIPPED
            return 0
        if depth == 1:
            return self.start_root(name)
        parent = self.kinds[depth - 1]
        self.kinds[depth] = SKIPPED
        if parent == SKIPPED or strncmp(name, self.namespace, self.namespace_length) != 0:
            return 0
        local = name + self.namespace_length
        if parent == PAIR:
            if strcmp(local, b"valueName") == 0:
                if self.pair_name is None:
                    self.collect(depth, PAIR_NAME, None, None)
            elif strcmp(local, b"value") == 0:
                if self.pair_value is None:
                    self.collect(depth, PAIR_VALUE, None, None)
            return 0
        fields = <dict>self.frames[depth - 1]
        if parent == ALERT:
            return self.start_in(depth, fields, local, _ALERT)
        if parent == INFO:
            return self.start_in(depth, fields, local, _INFO)
        if parent == AREA:
            return self.start_in(depth, fields, local, _AREA)
        return 0

    cdef int start_root(self, const char* name) except -1:
        cdef size_t length = strlen(CAP12)
        if strncmp(name, CAP12, length) == 0 and strcmp(name + length, b"}alert") == 0:
            self.namespace = b"urn:oasis:names:tc:emergency:cap:1.2}"
        elif strncmp(name, CAP11, length) == 0 and strcmp(name + length, b"}alert") == 0:
            self.namespace = b"urn:oasis:names:tc:emergency:cap:1.1}"
        else:
            self.declined = True
            return 0
        self.namespace_length = length + 1
        self.root = {}
        self.frames[1] = self.root
        self.kinds[1] = ALERT
        return 0

    cdef int start_in(self, int depth, dict fields, const char* local, _Table table) except -1:
        """Dispatch a child of an alert, info or area element by its local name."""
        cdef int i = _index(local, table.one_b)
        cdef dict inner
        cdef list found
        if i >= 0:
            name = table.one[i]
            if name not in fields:
                self.collect(depth, ONE, fields, name)
            return 0
        i = _index(local, table.texts_b)
        if i >= 0:
            self.collect(depth, LIST, fields, table.texts[i])
            return 0
        i = _index(local, table.pairs_b)
        if i >= 0:
            self.kinds[depth] = PAIR
            self.pair_fields = fields
            self.pair_key = table.pairs[i]
            self.pair_name = self.pair_value = None
            return 0
        if table.child_kind and strcmp(local, table.child) == 0:
            inner = {}
            name = "info" if table.child_kind == INFO else "area"
            found = fields.get(name)
            if found is None:
                fields[name] = [inner]
            else:
                found.append(inner)
            self.frames[depth] = inner
            self.kinds[depth] = table.child_kind
        return 0

    cdef void collect(self, int depth, Sink sink, object target, object name):
        self.kinds[depth] = TEXT
        self.text_depth = depth
        self.sink = sink
        self.sink_target = target
        self.sink_name = name
        self.length = 0

    cdef int end(self) except -1:
        cdef int depth = self.depth
        cdef list found
        self.depth = depth - 1
        if depth == self.text_depth:
            self.text_depth = 0
            text = PyUnicode_DecodeUTF8(self.buffer, self.length, NULL).strip()
            if self.sink == ONE:
                self.sink_target[self.sink_name] = text
            elif self.sink == LIST:
                self.append(self.sink_target, self.sink_name, text)
            elif self.sink == PAIR_NAME:
                self.pair_name = text
            else:
                self.pair_value = text
            self.sink_target = self.sink_name = None
        elif self.kinds[depth] == PAIR:
            pair = (self.pair_name or "", self.pair_value or "")
            self.append(self.pair_fields, self.pair_key, pair)
            self.pair_fields = self.pair_key = self.pair_name = self.pair_value = None
        if depth <= MAX_DEPTH:
            self.frames[depth] = None
        return 0

    cdef void append(self, dict fields, object name, object value):
        cdef list found = fields.get(name)
        if found is None:
            fields[name] = [value]
        else:
            found.append(value)

    cdef int characters(self, const char* data, int length) except -1:
        cdef size_t needed = self.length + <size_t>length
        cdef size_t capacity = self.capacity
        cdef char* grown
        if needed > capacity:
            while capacity < needed:
                capacity *= 2
            grown = <char*>PyMem_Realloc(self.buffer, capacity)
            if grown == NULL:
                raise MemoryError()
            self.buffer = grown
            self.capacity = capacity
        memcpy(self.buffer + self.length, data, length)
        self.length = needed
        return 0


cdef void _on_start(void* data, const char* name, const char** attributes) noexcept:
    cdef _Reader reader = <_Reader>data
    if reader.declined:
        return
    try:
        reader.start(name)
    except BaseException:
        reader.declined = True


cdef void _on_end(void* data, const char* name) noexcept:
    cdef _Reader reader = <_Reader>data
    if reader.declined:
        return
    try:
        reader.end()
    except BaseException:
        reader.declined = True


cdef void _on_characters(void* data, const char* text, int length) noexcept:
    cdef _Reader reader = <_Reader>data
    if reader.declined or not reader.text_depth:
        return
    try:
        reader.characters(text, length)
    except BaseException:
        reader.declined = True


cdef void _on_doctype(void* data, const char* name, const char* system, const char* public,
                      int internal) noexcept:
    (<_Reader>data).declined = True


def read(const unsigned char[::1] document not None):
    """Return the raw fields of a CAP ``<alert>`` document, or None to take the full path.

    The fields are those of ``alertstation.alerts.cap.read_fields``. The caller checks the bytes
    first (``alertstation.alerts.capfast.fast_fields``): no NUL byte, no ``<!DOCTYPE`` (a DOCTYPE
    seen anyway declines) and no XML declaration but version 1.0, which expat does not check.
    """
    if _capi == NULL:
        return None
    if document.shape[0] == 0:
        return None
    cdef _Reader reader = _Reader()
    cdef XMLParser parser = _capi.ParserCreate_MM(NULL, NULL, SEPARATOR)
    cdef int status, final
    cdef Py_ssize_t size = document.shape[0], fed = 0, step
    if parser == NULL:
        raise MemoryError()
    try:
        if _capi.SetHashSalt != NULL:
            _capi.SetHashSalt(parser, _salt)
        _capi.SetUserData(parser, <void*>reader)
        _capi.SetElementHandler(parser, _on_start, _on_end)
        _capi.SetCharacterDataHandler(parser, _on_characters)
        _capi.SetStartDoctypeDeclHandler(parser, _on_doctype)
        while True:
            step = min(<Py_ssize_t>CHUNK, size - fed)
            final = fed + step >= size
            status = _capi.Parse(parser, <const char*>&document[fed], <int>step, final)
            fed += step
            if status != 1 or reader.declined or final:
                break
    finally:
        _capi.ParserFree(parser)
    if status != 1 or reader.declined or reader.root is None:
        return None
    return reader.root
