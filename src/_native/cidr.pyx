# cython: language_level=3
"""One prefix table for IPv4 and IPv6: membership and longest-prefix match by binary search.

Every address is a 128-bit key held as two uint64 words (hi, lo). IPv4 ``a.b.c.d`` is keyed as
its IPv4-mapped IPv6 form ``::ffff:a.b.c.d`` and an IPv4 prefix ``p/n`` as ``::ffff:p/(96+n)``,
so both families live in one sorted structure and a mapped IPv6 address *is* its IPv4 address.

The prefixes of a table cut the key space into disjoint intervals; each interval carries the
index of the longest prefix covering it (or -1). A lookup is a binary search for the last
interval start at or below the key: O(log n), no allocation. Large tables add bucket indexes
(one over IPv4, one over the span of the IPv6 starts) in which most lookups end without touching
the interval array at all; the IPv4 buckets point into a compact copy of the IPv4 intervals
(32-bit start and label), searched four starts at once.

A batch (``find_many``, ``contains_many``) goes a chunk of C_CHUNK items at a time, every buffer
of the chunk on the stack (``_find_chunk``): the str objects are read in place and sorted by
family, so that the parse and the search never branch on it; each family is parsed in one run
(SSSE3 where the CPU has it: dotted quads by a shuffle their dots pick, IPv6 groups by shuffles
their colons pick in the usual client layouts, else two at a time),
which also requests each key's bucket as soon as the key is known; then each family is searched
in one run. ``contains_many`` turns a chunk's labels into bools as it goes: no label array.

``::ffff:0:0/96`` (all of IPv4) is always present as a hole labelled -1 that sorts after any real
prefix of the same extent: an IPv6 prefix such as ``::/0`` never covers an IPv4 address, while
the IPv4 ``0.0.0.0/0`` (which is exactly that range) still does.

Product code calls ``alertstation.security.bantable``, which validates input first; parsing here
is a strict fast path and anything it refuses is left to the wrapper's ``ipaddress``
parser, which has the last word.
"""

cimport cython
from cpython.list cimport PyList_GET_ITEM
from cpython.ref cimport PyObject
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t

import numpy as np

cdef uint64_t ALL_ONES = 0xFFFFFFFFFFFFFFFFULL
cdef uint64_t MAPPED_LO = 0x0000FFFF00000000ULL
# Longest textual address: IPv6 with an embedded IPv4 tail (45 characters).
cdef Py_ssize_t MAX_ADDRESS_TEXT = 45
# Nesting depth of distinct prefixes is bounded by the number of prefix lengths (0..128).
cdef enum:
    MAX_DEPTH = 130
    C_NOT_PARSED = -2
    C_AHEAD = 16  # items whose str objects find_many requests ahead of the one it parses
    C_CHUNK = 256  # items find_many sorts by family at a time (their text stays in L1)

NO_MATCH = -1
NOT_PARSED = -2
MAPPED_PREFIX_LEN = 96


cdef inline uint64_t _low_ones(int bits) noexcept nogil:
    """Return a word whose ``bits`` lowest bits are set (0..64)."""
    if bits <= 0:
        return 0
    if bits >= 64:
        return ALL_ONES
    return (<uint64_t>1 << bits) - 1


cdef inline bint _le(uint64_t ahi, uint64_t alo, uint64_t bhi, uint64_t blo) noexcept nogil:
    """Tell whether (ahi, alo) <= (bhi, blo) as 128-bit integers."""
    return ahi < bhi or (ahi == bhi and alo <= blo)


cdef inline bint _parse_ipv4(const char *text, Py_ssize_t length, uint64_t *value) noexcept nogil:
    """Parse dotted-quad IPv4 as ipaddress does: four 0..255 decimals, no leading zeros.

    Each octet reads its (up to) three characters at once and picks its width and value with
    selects, not a branch per character: octet widths vary at random from address to address,
    and branching on them costs a misprediction an octet.
    """
    cdef uint64_t number = 0
    cdef Py_ssize_t i = 0
    cdef unsigned int d0, d1, d2, octet
    cdef int part
    cdef bint bad = False, more1, more2
    if length < 7 or length > 15:
        return False
    for part in range(4):
        if i >= length:
            return False
        d0 = <unsigned int>(<unsigned char>text[i]) - 48u
        d1 = (<unsigned int>(<unsigned char>text[i + 1]) - 48u) if i + 1 < length else 10u
        d2 = (<unsigned int>(<unsigned char>text[i + 2]) - 48u) if i + 2 < length else 10u
        more1 = d1 < 10u
        more2 = more1 & (d2 < 10u)
        octet = (d0 * 100u + d1 * 10u + d2) if more2 else ((d0 * 10u + d1) if more1 else d0)
        bad |= (d0 >= 10u) | (octet > 255u) | ((d0 == 0u) & more1)  # not a digit, too big, 0n
        i += 1 + more1 + more2
        number = (number << 8) | (octet & 0xFFu)
        if part < 3:
            if i >= length or text[i] != c'.':
                return False
            i += 1
    if bad or i != length:
        return False
    value[0] = number
    return True


# Hex digit values by byte, -1 for anything else: a table, not range tests, because random hex
# digits make a branch on "digit or letter" a coin toss the CPU mispredicts half the time.
cdef signed char HEX_VALUE[256]


cdef void _fill_hex_table() noexcept:
    cdef int ch
    for ch in range(256):
        HEX_VALUE[ch] = -1
    for ch in range(10):
        HEX_VALUE[ord('0') + ch] = ch
    for ch in range(6):
        HEX_VALUE[ord('a') + ch] = 10 + ch
        HEX_VALUE[ord('A') + ch] = 10 + ch


_fill_hex_table()


cdef inline int _hex_value(char ch) noexcept nogil:
    return HEX_VALUE[<unsigned char>ch]


cdef bint _parse_ipv6(const char *text, Py_ssize_t length, uint64_t *hi, uint64_t *lo) noexcept nogil:
    """Parse IPv6 text as ipaddress does: 1..4 hex digits a group, one ``::`` for at least one
    zero group, an optional dotted-quad tail for the last two groups; no zone, no brackets."""
    cdef uint64_t groups[8]
    cdef uint64_t v4 = 0, value
    cdef Py_ssize_t i = 0, start, n = 0, gap = -1, k
    cdef int digit
    if length >= 2 and text[0] == c':' and text[1] == c':':
        gap = 0
        i = 2
    elif length == 0 or text[0] == c':':
        return False
    while i < length:
        start = i
        value = 0
        while i < length:
            digit = _hex_value(text[i])
            if digit < 0:
                break
            value = (value << 4) | <uint64_t>digit
            i += 1
            if i - start > 4:
                break
        if i < length and text[i] == c'.':  # the dotted-quad tail: two groups, and the end
            if n > 6 or not _parse_ipv4(text + start, length - start, &v4):
                return False
            groups[n] = v4 >> 16
            groups[n + 1] = v4 & 0xFFFF
            n += 2
            break
        if i == start or i - start > 4 or n == 8:
            return False
        groups[n] = value
        n += 1
        if i == length:
            break
        if text[i] != c':':
            return False
        i += 1
        if i < length and text[i] == c':':
            if gap >= 0:
                return False
            gap = n
            i += 1
        elif i == length:
            return False  # a single trailing colon
    if gap >= 0:
        if n > 7:
            return False  # "::" must stand for at least one group
        for k in range(n - 1, gap - 1, -1):
            groups[k + 8 - n] = groups[k]
        for k in range(gap, gap + 8 - n):
            groups[k] = 0
    elif n != 8:
        return False
    hi[0] = (groups[0] << 48) | (groups[1] << 32) | (groups[2] << 16) | groups[3]
    lo[0] = (groups[4] << 48) | (groups[5] << 32) | (groups[6] << 16) | groups[7]
    return True


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* Fast address parsing for the common case. SSE2 compares classify every character at once
       (digit, hex digit, dot, colon), the value of the octet or group ending at each position is
       computed for all positions together, and the values are picked at the run ends: no branch
       depends on how many digits an octet or group has, which the scalar parser mispredicts.
       It only ever accepts: anything it is unsure of (garbage, an embedded IPv4 tail, a zone,
       whitespace, other lengths) returns 0 and the scalar parser, which mirrors ipaddress,
       decides. x86-64 only (SSE2 is part of it); elsewhere it always returns 0. */
    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    #include <emmintrin.h>
    #include <tmmintrin.h>
    static inline uint32_t cidr_mask16(__m128i v, char ch) {
        return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(ch)));
    }
    /* Byte p (0..15) of a vector held as two words. */
    static inline uint32_t cidr_byte_at(uint64_t w0, uint64_t w1, uint32_t p) {
        uint64_t w = p < 8u ? w0 : w1;
        return (uint32_t)(w >> (8u * (p & 7u))) & 0xFFu;
    }
    /* Dotted quad of 7..15 characters in v (zeros past the end). Every check and every octet is
       computed for all 16 positions at once; the octets are then picked at the four run ends. */
    static inline int cidr_fast_ipv4(__m128i v, int length, uint64_t *value) {
        const __m128i zero = _mm_setzero_si128();
        __m128i d = _mm_sub_epi8(v, _mm_set1_epi8('0'));
        __m128i isd = _mm_cmpeq_epi8(_mm_subs_epu8(d, _mm_set1_epi8(9)), zero);
        __m128i dm = _mm_and_si128(d, isd);              /* digit values, 0 elsewhere */
        __m128i d1 = _mm_slli_si128(dm, 1);              /* the digit before */
        __m128i d2 = _mm_and_si128(_mm_slli_si128(dm, 2), _mm_slli_si128(isd, 1));
        __m128i d1x2 = _mm_add_epi8(d1, d1);
        __m128i d1x8 = _mm_add_epi8(_mm_add_epi8(d1x2, d1x2), _mm_add_epi8(d1x2, d1x2));
        __m128i tens = _mm_add_epi8(dm, _mm_add_epi8(d1x8, d1x2));  /* 10 * d1 + d: 0..99 */
        /* hundreds above 3 are refused below; clamped, 100 * d2 is built from 4, 32 and 64 times
           it without a 16-bit shift carrying into the next byte */
        __m128i d2c = _mm_min_epu8(d2, _mm_set1_epi8(3));
        __m128i h4 = _mm_add_epi8(_mm_add_epi8(d2c, d2c), _mm_add_epi8(d2c, d2c));
        __m128i h32 = _mm_slli_epi16(d2c, 5);
        __m128i h64 = _mm_add_epi8(h32, h32);
        __m128i octet = _mm_add_epi8(tens, _mm_add_epi8(h4, _mm_add_epi8(h32, h64)));
        /* over 255: hundreds above 2, or 2 with the rest above 55 */
        __m128i over = _mm_or_si128(
            _mm_cmpgt_epi8(d2, _mm_set1_epi8(2)),
            _mm_and_si128(_mm_cmpeq_epi8(d2, _mm_set1_epi8(2)),
                          _mm_cmpgt_epi8(tens, _mm_set1_epi8(55))));
        uint32_t dots = cidr_mask16(v, '.');
        uint32_t digits = (uint32_t)_mm_movemask_epi8(isd);
        uint32_t zeros = cidr_mask16(v, '0');
        uint32_t ends = digits & ~(digits >> 1);
        uint32_t starts = digits & ~(digits << 1);
        uint32_t last = (uint32_t)length - 1u, m = dots & (dots - 1u), m3 = m & (m - 1u);
        uint32_t e0, e1, e2;
        uint64_t w0, w1;
        if ((dots | digits) != (1u << length) - 1u  /* only digits and dots */
            || m == 0 || m3 == 0 || (m3 & (m3 - 1u)) != 0  /* three dots */
            || (dots & ((dots >> 1) | 1u | (1u << last))) != 0  /* no empty octet */
            || (digits & (digits >> 1) & (digits >> 2) & (digits >> 3)) != 0  /* 4+ digits */
            || (zeros & starts & (digits >> 1)) != 0  /* a leading zero */
            || ((uint32_t)_mm_movemask_epi8(over) & ends) != 0)
            return 0;
        e0 = (uint32_t)__builtin_ctz(dots) - 1u;
        e1 = (uint32_t)__builtin_ctz(m) - 1u;
        e2 = (uint32_t)__builtin_ctz(m3) - 1u;
        w0 = (uint64_t)_mm_cvtsi128_si64(octet);
        w1 = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(octet, octet));
        *value = (cidr_byte_at(w0, w1, e0) << 24) | (cidr_byte_at(w0, w1, e1) << 16)
            | (cidr_byte_at(w0, w1, e2) << 8) | cidr_byte_at(w0, w1, last);
        return 1;
    }
    /* Nibble values of 16 characters (0 where not a hex digit); *mask gets the hex positions. */
    static inline __m128i cidr_hex16(__m128i v, __m128i *is) {
        __m128i d = _mm_sub_epi8(v, _mm_set1_epi8('0'));
        __m128i isd = _mm_cmpeq_epi8(_mm_subs_epu8(d, _mm_set1_epi8(9)), _mm_setzero_si128());
        __m128i a = _mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
        __m128i isa = _mm_cmpeq_epi8(_mm_subs_epu8(a, _mm_set1_epi8(5)), _mm_setzero_si128());
        *is = _mm_or_si128(isd, isa);
        return _mm_or_si128(
            _mm_and_si128(d, isd), _mm_and_si128(_mm_add_epi8(a, _mm_set1_epi8(10)), isa));
    }
    static inline uint32_t cidr_load32(const unsigned char *p) {
        uint32_t w;
        memcpy(&w, p, 4);
        return w;
    }
    /* Eight groups of 1..4 hex digits ending at end[0..7] (the first may start less than three
       bytes in). Each group's four bytes up to its end are loaded as one word, the bytes before
       the group dropped, and the eight words turned into group values side by side: nibbles
       ('0'-'9': low four bits; letters: low four bits + 9), then pairs, then the group. */
    static inline void cidr_eight_groups(const unsigned char *b, const int *end,
                                         uint64_t *hi, uint64_t *lo) {
        uint32_t w[8];
        int k, len;
        __m128i v[2], x, n, t, bias = _mm_set1_epi32(0x8000), packed;
        w[0] = end[0] >= 3 ? cidr_load32(b + end[0] - 3) : cidr_load32(b) << (8 * (3 - end[0]));
        w[0] &= 0xFFFFFFFFu << (8 * (3 - (end[0] < 3 ? end[0] : 3)));
        for (k = 1; k < 8; k++) {
            len = end[k] - end[k - 1] - 1;  /* 1..4: checked by the caller */
            w[k] = cidr_load32(b + end[k] - 3) & (0xFFFFFFFFu << (8 * (4 - len)));
        }
        v[0] = _mm_setr_epi32((int)w[0], (int)w[1], (int)w[2], (int)w[3]);
        v[1] = _mm_setr_epi32((int)w[4], (int)w[5], (int)w[6], (int)w[7]);
        for (k = 0; k < 2; k++) {
            x = v[k];
            n = _mm_add_epi8(
                _mm_and_si128(x, _mm_set1_epi8(0x0F)),
                _mm_mullo_epi16(_mm_and_si128(_mm_srli_epi32(x, 6), _mm_set1_epi8(0x01)),
                                _mm_set1_epi16(9)));
            t = _mm_or_si128(_mm_slli_epi32(_mm_and_si128(n, _mm_set1_epi32(0x000F000F)), 4),
                             _mm_and_si128(_mm_srli_epi32(n, 8), _mm_set1_epi32(0x000F000F)));
            v[k] = _mm_or_si128(_mm_slli_epi32(_mm_and_si128(t, _mm_set1_epi32(0xFF)), 8),
                                _mm_and_si128(_mm_srli_epi32(t, 16), _mm_set1_epi32(0xFF)));
            /* reverse the four groups: the first is the top of its word */
            v[k] = _mm_sub_epi32(_mm_shuffle_epi32(v[k], _MM_SHUFFLE(0, 1, 2, 3)), bias);
        }
        packed = _mm_xor_si128(_mm_packs_epi32(v[0], v[1]), _mm_set1_epi16((short)0x8000));
        *hi = (uint64_t)_mm_cvtsi128_si64(packed);
        *lo = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(packed, packed));
    }
    /* Eight groups with SSSE3: the groups are taken two at a time, from one 16-byte load at
       the first's start; their lengths (1 to 4 each, 16 layouts) choose a byte shuffle that
       puts each group's digits right-aligned in its own four bytes, and the 32 digits become
       the key with one multiply-add and a pack. The loads reach 16 bytes past a pair's start
       (at most 52 past the text's): the caller makes 64 bytes readable. */
    static unsigned char cidr_pair_shuffle[16][16] __attribute__((aligned(16)));
    static int cidr_has_ssse3 = 0;
    __attribute__((target("ssse3")))
    static inline void cidr_eight_groups_ssse3(const unsigned char *b, const int *end,
                                               uint64_t *hi, uint64_t *lo) {
        __m128i q[4], v[2], n, t, packed;
        int k, a, s, la, lb;
        for (k = 0; k < 4; k++) {
            s = k ? end[2 * k - 1] + 2 : 0;  /* the pair's start */
            a = end[2 * k] + 2;  /* the second group's start */
            la = end[2 * k] - s + 1;
            lb = end[2 * k + 1] - a + 1;
            q[k] = _mm_shuffle_epi8(
                _mm_loadu_si128((const __m128i *)(b + s)),
                _mm_load_si128((const __m128i *)cidr_pair_shuffle[(la - 1) + 4 * (lb - 1)]));
        }
        v[0] = _mm_unpacklo_epi64(q[0], q[1]);
        v[1] = _mm_unpacklo_epi64(q[2], q[3]);
        for (k = 0; k < 2; k++) {  /* digit values: low four bits, + 9 for letters (bit 6) */
            t = _mm_and_si128(_mm_srli_epi16(v[k], 6), _mm_set1_epi8(1));
            n = _mm_add_epi8(_mm_and_si128(v[k], _mm_set1_epi8(0x0F)),
                             _mm_add_epi8(_mm_slli_epi16(t, 3), t));
            v[k] = _mm_maddubs_epi16(n, _mm_set1_epi16(0x0110));  /* 16 * first + second */
        }
        packed = _mm_packus_epi16(v[0], v[1]);  /* the key's 16 bytes, most significant first */
        *hi = __builtin_bswap64((uint64_t)_mm_cvtsi128_si64(packed));
        *lo = __builtin_bswap64((uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(packed, packed)));
    }
    /* IPv6 texts of the usual client address's layouts, with SSSE3: eight groups of four hex
       digits each, or with one or two of them three digits long (a leading zero dropped),
       37 to 39 characters; 1 and the key, else 0 (the caller reads it the general way). The
       layout is told by where the colons and the end are, the key colons | 1 << length,
       which picks a slot by a multiplicative hash no two of the 37 keys share
       (CIDR_USUAL6_MULT, found by a search over multipliers; the slot's own key confirms it).
       The slot's shuffles gather each group's digits right-aligned into four places of two
       vectors (places before a short group's first digit get '0'), where all 32 are checked
       as hex digits and turned into the key; every character that is not a colon is one of
       them, so no place is classified twice. Reads 48 bytes at b: the caller makes 64
       readable. */
    typedef struct {
        unsigned char shuffle[4][16];  /* groups 0-3 from v0, v1; groups 4-7 from v1, v2 */
        unsigned char fill[2][16];  /* '0' where a short group has no digit */
        uint64_t key;  /* colons | 1 << length; 0 in a slot no layout has */
        uint64_t unused[3];
    } cidr_usual6;
    #define CIDR_USUAL6_MULT 0x414e83f28342ae09ULL
    #define CIDR_USUAL6_SHIFT 58
    /* The slot of eight groups of four digits: colons at 4, 9, ..., 34 and the end at 39. */
    #define CIDR_USUAL6_FULL ((0x8421084210ULL * CIDR_USUAL6_MULT) >> CIDR_USUAL6_SHIFT)
    static cidr_usual6 cidr_usual6_slots[64] __attribute__((aligned(64)));
    static int cidr_usual6_apart = 1;  /* else every IPv6 text is read the general way */
    static inline uint32_t cidr_usual6_slot(uint64_t key) {
        return (uint32_t)((key * CIDR_USUAL6_MULT) >> CIDR_USUAL6_SHIFT);
    }
    static void cidr_init_usual6(void) {
        int layout, g, i, pos, lane, source, end[8], width[8];
        uint64_t key;
        cidr_usual6 *slot;
        for (layout = 0; layout < 256; layout++) {
            if (__builtin_popcount((unsigned)layout) > 2) continue;
            key = 0;
            for (pos = 0, g = 0; g < 8; g++) {
                width[g] = (layout >> g & 1) ? 3 : 4;
                pos += width[g];
                end[g] = pos - 1;
                if (g < 7) key |= 1ULL << pos;
                pos += 1;
            }
            key |= 1ULL << (pos - 1);  /* the length */
            slot = &cidr_usual6_slots[cidr_usual6_slot(key)];
            if (slot->key != 0) cidr_usual6_apart = 0;  /* two layouts share a slot */
            slot->key = key;
            memset(slot->shuffle, 0x80, sizeof slot->shuffle);
            memset(slot->fill, 0, sizeof slot->fill);
            for (g = 0; g < 8; g++) {
                for (i = 0; i < 4; i++) {
                    lane = 4 * (g % 4) + i;
                    source = end[g] - 3 + i;
                    if (i < 4 - width[g]) {
                        slot->fill[g / 4][lane] = '0';
                    } else if (g < 4) {  /* groups 0-3 lie within v0 and v1 */
                        slot->shuffle[source < 16 ? 0 : 1][lane] = (unsigned char)(source % 16);
                    } else {  /* groups 4-7 within v1 and v2 */
                        slot->shuffle[source < 32 ? 2 : 3][lane] = (unsigned char)(source % 16);
                    }
                }
            }
        }
    }
    __attribute__((target("ssse3")))
    static inline int cidr_usual_ipv6_ssse3(const unsigned char *b, __m128i v0, int length,
                                            uint64_t *hi, uint64_t *lo) {
        __m128i v1 = _mm_loadu_si128((const __m128i *)(b + 16));
        __m128i v2 = _mm_loadu_si128((const __m128i *)(b + 32));
        __m128i v[2], is, t, n, packed;
        uint32_t c0 = cidr_mask16(v0, ':'), c1 = cidr_mask16(v1, ':'), c2 = cidr_mask16(v2, ':');
        uint64_t key;
        const cidr_usual6 *slot;
        int k;
        if (length == 39 && c0 == 0x4210u && c1 == 0x2108u && (c2 & 0x7Fu) == 0x4u) {
            slot = &cidr_usual6_slots[CIDR_USUAL6_FULL];  /* the commonest: no hash to work out */
        } else {
            key = ((uint64_t)c0 | (uint64_t)c1 << 16 | (uint64_t)c2 << 32) & ((1ULL << length) - 1);
            key |= 1ULL << length;
            slot = &cidr_usual6_slots[cidr_usual6_slot(key)];
            if (slot->key != key) return 0;
        }
        v[0] = _mm_or_si128(
            _mm_or_si128(
                _mm_shuffle_epi8(v0, _mm_load_si128((const __m128i *)slot->shuffle[0])),
                _mm_shuffle_epi8(v1, _mm_load_si128((const __m128i *)slot->shuffle[1]))),
            _mm_load_si128((const __m128i *)slot->fill[0]));
        v[1] = _mm_or_si128(
            _mm_or_si128(
                _mm_shuffle_epi8(v1, _mm_load_si128((const __m128i *)slot->shuffle[2])),
                _mm_shuffle_epi8(v2, _mm_load_si128((const __m128i *)slot->shuffle[3]))),
            _mm_load_si128((const __m128i *)slot->fill[1]));
        for (k = 0; k < 2; k++) {
            (void)cidr_hex16(v[k], &is);
            if (_mm_movemask_epi8(is) != 0xFFFF) return 0;
            t = _mm_and_si128(_mm_srli_epi16(v[k], 6), _mm_set1_epi8(1));
            n = _mm_add_epi8(_mm_and_si128(v[k], _mm_set1_epi8(0x0F)),
                             _mm_add_epi8(_mm_slli_epi16(t, 3), t));
            v[k] = _mm_maddubs_epi16(n, _mm_set1_epi16(0x0110));  /* 16 * first + second */
        }
        packed = _mm_packus_epi16(v[0], v[1]);  /* the key's 16 bytes, most significant first */
        *hi = __builtin_bswap64((uint64_t)_mm_cvtsi128_si64(packed));
        *lo = __builtin_bswap64((uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(packed, packed)));
        return 1;
    }
    /* IPv6 without a dotted tail or zone, 2..39 characters: three vectors (zeros past the end).
       All eight groups written out (the usual client address): cidr_eight_groups. With a "::",
       the value of the group ending at every position is computed at once: its low byte (the
       last two digits) and its high byte (the two before, kept only while the group goes on);
       the groups are then read at the group ends and placed around the gap. */
    static inline __attribute__((always_inline)) int cidr_fast_ipv6(
            const unsigned char *b, __m128i v0, int length, uint64_t *hi, uint64_t *lo,
            int ssse3) {
        unsigned char low[48], high[48];
        __m128i n = _mm_set1_epi8((char)length), idx = _mm_setr_epi8(
            16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
        __m128i v[3], h[3], is[3], h1, is1, is2, p[3], p2;
        uint64_t colons = 0, hex = 0, dc, ends, all = (1ULL << length) - 1ULL, last, left, right;
        unsigned __int128 key = 0;
        int k, g, total, e, j, shift, end[8];
        if (ssse3 && length >= 37 && cidr_usual_ipv6_ssse3(b, v0, length, hi, lo)) return 1;
        v[0] = v0;
        v[1] = _mm_and_si128(_mm_loadu_si128((const __m128i *)(b + 16)), _mm_cmpgt_epi8(n, idx));
        idx = _mm_add_epi8(idx, _mm_set1_epi8(16));
        v[2] = _mm_and_si128(_mm_loadu_si128((const __m128i *)(b + 32)), _mm_cmpgt_epi8(n, idx));
        for (k = 0; k < 3; k++) {
            h[k] = cidr_hex16(v[k], &is[k]);
            colons |= (uint64_t)cidr_mask16(v[k], ':') << (16 * k);
            hex |= (uint64_t)(uint32_t)_mm_movemask_epi8(is[k]) << (16 * k);
        }
        if ((colons | hex) != all || (hex & (hex >> 1) & (hex >> 2) & (hex >> 3) & (hex >> 4)))
            return 0;
        last = 1ULL << (length - 1);
        dc = colons & (colons >> 1);  /* the first colon of each "::" */
        ends = hex & ~(hex >> 1);
        if (colons == 0x421084210ULL && length == 39) {  /* eight groups of four digits */
            static const int full[8] = {3, 8, 13, 18, 23, 28, 33, 38};
            if (ssse3) cidr_eight_groups_ssse3(b, full, hi, lo);
            else cidr_eight_groups(b, full, hi, lo);
            return 1;
        }
        if (dc == 0) {  /* all eight groups written out: read each at its end, from the text */
            if (colons & (1ULL | last)) return 0;
            /* Single colons between groups: eight groups exactly when eight group ends are
               taken and only the sentinel past any text (bit 48) is left. */
            ends |= 1ULL << 48;
            for (k = 0; k < 8; k++) {
                end[k] = __builtin_ctzll(ends);
                ends &= ends - 1ULL;
            }
            if (ends != (1ULL << 48)) return 0;
            if (ssse3) cidr_eight_groups_ssse3(b, end, hi, lo);
            else cidr_eight_groups(b, end, hi, lo);
            return 1;
        } else {
            if (dc & (dc - 1ULL)) return 0;  /* two of them, or ":::" */
            g = __builtin_ctzll(dc);
            /* a single colon at either end */
            if ((g > 0 && (colons & 1ULL)) || (g + 2 < length && (colons & last))) return 0;
            left = g > 0 ? (uint64_t)__builtin_popcountll(colons & ((1ULL << g) - 1ULL)) + 1 : 0;
            right = g + 2 < length ? (uint64_t)__builtin_popcountll(colons >> (g + 2)) + 1 : 0;
            total = (int)(left + right);
            if (total > 7) return 0;
        }
        for (k = 0; k < 3; k++) {
            h1 = _mm_slli_si128(h[k], 1);
            if (k) h1 = _mm_or_si128(h1, _mm_srli_si128(h[k - 1], 15));
            p[k] = _mm_or_si128(h[k], _mm_slli_epi16(h1, 4));  /* nibbles: no carry across bytes */
        }
        for (k = 0; k < 3; k++) {
            p2 = _mm_slli_si128(p[k], 2);
            is1 = _mm_slli_si128(is[k], 1);
            is2 = _mm_slli_si128(is[k], 2);
            if (k) {
                p2 = _mm_or_si128(p2, _mm_srli_si128(p[k - 1], 14));
                is1 = _mm_or_si128(is1, _mm_srli_si128(is[k - 1], 15));
                is2 = _mm_or_si128(is2, _mm_srli_si128(is[k - 1], 14));
            }
            _mm_storeu_si128((__m128i *)(low + 16 * k), p[k]);
            _mm_storeu_si128((__m128i *)(high + 16 * k), _mm_and_si128(p2, _mm_and_si128(is1, is2)));
        }
        for (j = 0; ends; j++) {
            e = __builtin_ctzll(ends);
            ends &= ends - 1ULL;
            shift = 16 * (7 - (e > g ? j + 8 - total : j));
            key |= (unsigned __int128)(((uint32_t)high[e] << 8) | low[e]) << shift;
        }
        *hi = (uint64_t)(key >> 64);
        *lo = (uint64_t)key;
        return 1;
    }
    /* 4 (IPv4, or IPv4-mapped IPv6), 6, or 0: not decided here. The text is read 48 bytes at a
       time straight from where it lies when those bytes stay within its memory page (a read
       there cannot fault, and the bytes past the end are masked to zero before any use), else
       it is copied into a zeroed buffer first. */
    static inline int cidr_fast_parse(const char *text, Py_ssize_t length, uint64_t *hi, uint64_t *lo) {
        unsigned char b[48];
        const unsigned char *src = (const unsigned char *)text;
        uint64_t v4;
        __m128i n, idx, v;
        if (length < 2 || length > 39) return 0;
        if (((uintptr_t)text & 4095u) > 4096u - 48u) {
            memset(b, 0, sizeof b);
            memcpy(b, text, (size_t)length);
            src = b;
        }
        n = _mm_set1_epi8((char)length);
        idx = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        v = _mm_and_si128(_mm_loadu_si128((const __m128i *)src), _mm_cmpgt_epi8(n, idx));
        if (length <= 15 && length >= 7 && cidr_fast_ipv4(v, (int)length, &v4)) {
            *hi = 0;
            *lo = 0x0000FFFF00000000ULL | v4;
            return 4;
        }
        if (!cidr_fast_ipv6(src, v, (int)length, hi, lo, 0)) return 0;
        return (*hi == 0 && (*lo >> 32) == 0xFFFF) ? 4 : 6;
    }
    /* A plain dotted quad only (1 and its 32-bit value, else 0): the IPv4 part of
       cidr_fast_parse alone, for a run of texts sorted as IPv4. */
    static inline int cidr_fast_parse4(const char *text, Py_ssize_t length, uint32_t *value) {
        unsigned char b[16];
        const unsigned char *src = (const unsigned char *)text;
        uint64_t v4;
        __m128i v;
        if (length < 7 || length > 15) return 0;
        if (((uintptr_t)text & 4095u) > 4096u - 16u) {
            memset(b, 0, sizeof b);
            memcpy(b, text, (size_t)length);
            src = b;
        }
        v = _mm_and_si128(_mm_loadu_si128((const __m128i *)src),
                          _mm_cmpgt_epi8(_mm_set1_epi8((char)length),
                                         _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                                       12, 13, 14, 15)));
        if (!cidr_fast_ipv4(v, (int)length, &v4)) return 0;
        *value = (uint32_t)v4;
        return 1;
    }
    /* Dotted quads with SSSE3 (picked at run time). The layout of a dotted quad (the octet
       lengths, 1 to 3 each: 81 layouts) is told by where its three dots and its end are, the
       key dots | 1 << length; the key picks a slot by a multiplicative hash that no two of the
       81 keys share (CIDR_LAYOUT4_MULT, found by a search over every odd multiplier: none
       works for fewer slots), and the slot's own key confirms it. The slot holds a byte
       shuffle that puts each octet's digits right-aligned in its own 32-bit lane (two
       multiply-adds then turn the lanes into octet values) and the first digit of each octet
       of two or more digits, where a zero is a refused leading zero. The same checks as
       cidr_fast_ipv4: digits and three dots only, no empty octet, no leading zero, none over
       255. */
    typedef struct {
        unsigned char shuffle[16];
        uint32_t key;  /* dots | 1 << length; 0 in a slot no layout has */
        uint32_t multi;  /* the first digit of each octet of two or more digits */
        uint32_t unused[2];
    } cidr_layout4;
    #define CIDR_LAYOUT4_MULT 0x008d981bu
    #define CIDR_LAYOUT4_SHIFT 24
    static cidr_layout4 cidr_layouts4[256] __attribute__((aligned(32)));
    static int cidr_layouts4_apart = 1;  /* else the scalar parser reads every dotted quad */
    static inline uint32_t cidr_layout4_slot(uint32_t key) {
        return (uint32_t)(key * CIDR_LAYOUT4_MULT) >> CIDR_LAYOUT4_SHIFT;
    }
    static int cidr_use_ssse3(int on);
    static void cidr_init_ipv4(void) {
        int pattern, k, i, start, len[4];
        cidr_layout4 *slot;
        uint32_t key, multi;
        for (pattern = 0; pattern < 81; pattern++) {
            len[0] = pattern % 3 + 1;
            len[1] = pattern / 3 % 3 + 1;
            len[2] = pattern / 9 % 3 + 1;
            len[3] = pattern / 27 + 1;
            key = 0;
            multi = 0;
            for (start = 0, k = 0; k < 4; k++) {
                if (len[k] > 1) multi |= 1u << start;
                start += len[k] + 1;
                key |= 1u << (start - 1);  /* the dot after the octet, or the end */
            }
            slot = &cidr_layouts4[cidr_layout4_slot(key)];
            if (slot->key != 0) cidr_layouts4_apart = 0;  /* two layouts share a slot */
            slot->key = key;
            slot->multi = multi;
            for (start = 0, k = 0; k < 4; k++) {
                for (i = 0; i < 3; i++) {
                    int digit = i - (3 - len[k]);
                    slot->shuffle[4 * k + i] = digit >= 0 ? (unsigned char)(start + digit) : 0x80;
                }
                slot->shuffle[4 * k + 3] = 0x80;
                start += len[k] + 1;
            }
        }
        for (pattern = 0; pattern < 16; pattern++) {
            len[0] = pattern % 4 + 1;
            len[1] = pattern / 4 + 1;
            for (k = 0; k < 2; k++) {
                start = k ? len[0] + 1 : 0;
                for (i = 0; i < 4; i++) {
                    int digit = i - (4 - len[k]);
                    cidr_pair_shuffle[pattern][4 * k + i] =
                        digit >= 0 ? (unsigned char)(start + digit) : 0x80;
                }
            }
            for (i = 8; i < 16; i++) cidr_pair_shuffle[pattern][i] = 0x80;
        }
        cidr_init_usual6();
        __builtin_cpu_init();
        cidr_has_ssse3 = cidr_use_ssse3(1);
    }
    static int cidr_use_ssse3(int on) {
        cidr_has_ssse3 = on && cidr_layouts4_apart && cidr_usual6_apart
            && __builtin_cpu_supports("ssse3");
        return cidr_has_ssse3;
    }
    __attribute__((target("ssse3")))
    static inline int cidr_ipv4_ssse3(__m128i v, int length, uint32_t *value) {
        __m128i d = _mm_sub_epi8(v, _mm_set1_epi8('0'));
        __m128i isd = _mm_cmpeq_epi8(_mm_subs_epu8(d, _mm_set1_epi8(9)), _mm_setzero_si128());
        __m128i octets;
        uint32_t digits = (uint32_t)_mm_movemask_epi8(isd), dots = cidr_mask16(v, '.');
        uint32_t zeros = cidr_mask16(v, '0'), key = dots | (1u << length);
        const cidr_layout4 *slot = &cidr_layouts4[cidr_layout4_slot(key)];
        if ((digits | dots) != (1u << length) - 1u  /* only digits and dots */
            || slot->key != key  /* three dots, no empty octet, none of 4+ digits */
            || (zeros & slot->multi) != 0)  /* a leading zero */
            return 0;
        octets = _mm_madd_epi16(
            _mm_maddubs_epi16(_mm_shuffle_epi8(d, _mm_load_si128((const __m128i *)slot->shuffle)),
                              _mm_set1_epi32(0x00010A64)),
            _mm_set1_epi16(1));
        if (_mm_movemask_epi8(_mm_cmpgt_epi32(octets, _mm_set1_epi32(255))) != 0) return 0;
        octets = _mm_packus_epi16(_mm_packs_epi32(octets, octets), octets);
        *value = __builtin_bswap32((uint32_t)_mm_cvtsi128_si32(octets));
        return 1;
    }
    /* Place one pick of a run: its address at out[*taken] and the pick at at[*taken] (both
       kept only when ok), the pick at missed[*left] (kept only when not), and the address's
       bucket requested from memory; no branch on ok. */
    static inline __attribute__((always_inline)) void cidr_place4(
            int ok, uint32_t value, int32_t pick, uint32_t *out, int32_t *at, int32_t *missed,
            Py_ssize_t *taken, Py_ssize_t *left, const uint64_t *index4, int shift4) {
        out[*taken] = value;
        if (index4) __builtin_prefetch(index4 + (value >> shift4), 0, 3);
        at[*taken] = pick;
        missed[*left] = pick;
        *taken += ok;
        *left += 1 - ok;
    }
    /* Parse the texts a run of dotted quads picks. Each address goes to out[] and its pick to
       at[], the picks the parser does not take to missed[] (their count to *nmissed), without
       a branch on which; return how many were taken. */
    __attribute__((target("ssse3")))
    static Py_ssize_t cidr_run4_ssse3(const char *const *texts, const Py_ssize_t *lengths,
                                      const int32_t *pick, Py_ssize_t count, uint32_t *out,
                                      int32_t *at, int32_t *missed, Py_ssize_t *nmissed,
                                      const uint64_t *index4, int shift4) {
        unsigned char b[16];
        const unsigned char *src;
        Py_ssize_t k, length, taken = 0, left = 0;
        uint32_t value;
        int ok;
        const __m128i idx = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        for (k = 0; k < count; k++) {
            src = (const unsigned char *)texts[pick[k]];
            length = lengths[pick[k]];
            value = 0;
            ok = 0;
            if (length >= 7 && length <= 15) {
                if (((uintptr_t)src & 4095u) > 4096u - 16u) {
                    memset(b, 0, sizeof b);
                    memcpy(b, src, (size_t)length);
                    src = b;
                }
                ok = cidr_ipv4_ssse3(
                    _mm_and_si128(_mm_loadu_si128((const __m128i *)src),
                                  _mm_cmpgt_epi8(_mm_set1_epi8((char)length), idx)),
                    (int)length, &value);
            }
            cidr_place4(ok, value, pick[k], out, at, missed, &taken, &left, index4, shift4);
        }
        *nmissed = left;
        return taken;
    }
    static Py_ssize_t cidr_run4(const char *const *texts, const Py_ssize_t *lengths,
                                const int32_t *pick, Py_ssize_t count, uint32_t *out,
                                int32_t *at, int32_t *missed, Py_ssize_t *nmissed,
                                const uint64_t *index4, int shift4) {
        Py_ssize_t k, taken = 0, left = 0;
        uint32_t value;
        int ok;
        if (cidr_has_ssse3)
            return cidr_run4_ssse3(texts, lengths, pick, count, out, at, missed, nmissed,
                                   index4, shift4);
        for (k = 0; k < count; k++) {
            value = 0;
            ok = cidr_fast_parse4(texts[pick[k]], lengths[pick[k]], &value);
            cidr_place4(ok, value, pick[k], out, at, missed, &taken, &left, index4, shift4);
        }
        *nmissed = left;
        return taken;
    }
    /* IPv6 text without a dotted tail only (1, else 0; a mapped IPv4 address comes out as
       its key): the IPv6 part of cidr_fast_parse alone, for a run of texts sorted as IPv6.
       64 bytes are read from where the text lies when they stay within its memory page, else
       from a zeroed copy; with SSSE3 (picked at run time) the groups are read in pairs. */
    static inline __attribute__((always_inline)) int cidr_fast_parse6_with(
            const char *text, Py_ssize_t length, uint64_t *hi, uint64_t *lo, int ssse3) {
        unsigned char b[64];
        const unsigned char *src = (const unsigned char *)text;
        __m128i v;
        if (length < 2 || length > 39) return 0;
        if (((uintptr_t)text & 4095u) > 4096u - 64u) {
            memset(b, 0, sizeof b);
            memcpy(b, text, (size_t)length);
            src = b;
        }
        v = _mm_and_si128(_mm_loadu_si128((const __m128i *)src),
                          _mm_cmpgt_epi8(_mm_set1_epi8((char)length),
                                         _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                                       12, 13, 14, 15)));
        return cidr_fast_ipv6(src, v, (int)length, hi, lo, ssse3);
    }
    /* Parse the texts a run of IPv6 text picks, as cidr_run4 does dotted quads: each key goes
       to keys[] (hi, lo) and its pick to at[], the picks not taken to missed[] (refused here,
       or an IPv4-mapped address: its key is IPv4's); return how many were taken. When the
       table has an IPv6 index (index6, base6, shift6, last6 as in its Table) each key's
       bucket is requested as soon as the key is known. */
    static inline __attribute__((always_inline)) Py_ssize_t cidr_run6_with(
            const char *const *texts, const Py_ssize_t *lengths, const int32_t *pick,
            Py_ssize_t count, uint64_t *keys, int32_t *at, int32_t *missed,
            Py_ssize_t *nmissed, const uint64_t *index6, uint64_t base6, int shift6,
            uint64_t last6, int ssse3) {
        Py_ssize_t k, taken = 0, left = 0;
        uint64_t hi, lo, bucket;
        int ok;
        for (k = 0; k < count; k++) {
            hi = 0;
            lo = 0;
            ok = cidr_fast_parse6_with(texts[pick[k]], lengths[pick[k]], &hi, &lo, ssse3);
            ok &= !(hi == 0 && (lo >> 32) == 0xFFFFu);
            keys[2 * taken] = hi;
            keys[2 * taken + 1] = lo;
            at[taken] = pick[k];
            missed[left] = pick[k];
            taken += ok;
            left += 1 - ok;
            if (index6) {
                bucket = hi < base6 ? 0 : ((hi - base6) >> shift6) + 1;
                __builtin_prefetch(index6 + (bucket > last6 + 1 ? last6 + 1 : bucket), 0, 3);
            }
        }
        *nmissed = left;
        return taken;
    }
    __attribute__((target("ssse3")))
    static Py_ssize_t cidr_run6_ssse3(
            const char *const *texts, const Py_ssize_t *lengths, const int32_t *pick,
            Py_ssize_t count, uint64_t *keys, int32_t *at, int32_t *missed,
            Py_ssize_t *nmissed, const uint64_t *index6, uint64_t base6, int shift6,
            uint64_t last6) {
        return cidr_run6_with(texts, lengths, pick, count, keys, at, missed, nmissed,
                              index6, base6, shift6, last6, 1);
    }
    static Py_ssize_t cidr_run6(
            const char *const *texts, const Py_ssize_t *lengths, const int32_t *pick,
            Py_ssize_t count, uint64_t *keys, int32_t *at, int32_t *missed,
            Py_ssize_t *nmissed, const uint64_t *index6, uint64_t base6, int shift6,
            uint64_t last6) {
        if (cidr_has_ssse3)
            return cidr_run6_ssse3(texts, lengths, pick, count, keys, at, missed, nmissed,
                                   index6, base6, shift6, last6);
        return cidr_run6_with(texts, lengths, pick, count, keys, at, missed, nmissed,
                              index6, base6, shift6, last6, 0);
    }
    #else
    static inline int cidr_fast_parse(const char *text, Py_ssize_t length, uint64_t *hi, uint64_t *lo) {
        return 0;
    }
    static Py_ssize_t cidr_run6(
            const char *const *texts, const Py_ssize_t *lengths, const int32_t *pick,
            Py_ssize_t count, uint64_t *keys, int32_t *at, int32_t *missed,
            Py_ssize_t *nmissed, const uint64_t *index6, uint64_t base6, int shift6,
            uint64_t last6) {
        Py_ssize_t k;
        for (k = 0; k < count; k++) missed[k] = pick[k];
        *nmissed = count;
        return 0;
    }
    static inline int cidr_fast_parse4(const char *text, Py_ssize_t length, uint32_t *value) {
        return 0;
    }
    static void cidr_init_ipv4(void) {}
    static int cidr_use_ssse3(int on) { return 0; }
    static Py_ssize_t cidr_run4(const char *const *texts, const Py_ssize_t *lengths,
                                const int32_t *pick, Py_ssize_t count, uint32_t *out,
                                int32_t *at, int32_t *missed, Py_ssize_t *nmissed,
                                const uint64_t *index4, int shift4) {
        Py_ssize_t k;
        for (k = 0; k < count; k++) missed[k] = pick[k];
        *nmissed = count;
        return 0;
    }
    #endif
    """
    int cidr_fast_parse(
        const char *text, Py_ssize_t length, uint64_t *hi, uint64_t *lo
    ) noexcept nogil
    int cidr_fast_parse4(const char *text, Py_ssize_t length, uint32_t *value) noexcept nogil
    void cidr_init_ipv4() noexcept
    int cidr_use_ssse3(int on) noexcept
    Py_ssize_t cidr_run4(
        const char *const *texts, const Py_ssize_t *lengths, const int32_t *pick,
        Py_ssize_t count, uint32_t *out, int32_t *at, int32_t *missed, Py_ssize_t *nmissed,
        const uint64_t *index4, int shift4,
    ) noexcept nogil
    Py_ssize_t cidr_run6(
        const char *const *texts, const Py_ssize_t *lengths, const int32_t *pick,
        Py_ssize_t count, uint64_t *keys, int32_t *at, int32_t *missed, Py_ssize_t *nmissed,
        const uint64_t *index6, uint64_t base6, int shift6, uint64_t last6,
    ) noexcept nogil


cidr_init_ipv4()


def _use_ssse3(bint on):
    """Let the batch parse dotted quads and IPv6 groups with SSSE3 (the default where the CPU
    has it) or not; return whether it now does. For tests of the other path."""
    return bool(cidr_use_ssse3(on))


cdef int _parse_text_scalar(
    const char *text, Py_ssize_t length, uint64_t *hi, uint64_t *lo
) noexcept nogil:
    """Parse one address into its key; return 4 (IPv4 or mapped), 6, or 0 when refused.

    One character at a time, as ipaddress reads it: the last word on text the fast parser
    does not take.
    """
    cdef Py_ssize_t i
    cdef uint64_t v4 = 0
    if length <= 0 or length > MAX_ADDRESS_TEXT:
        return 0
    # Any IPv6 text has a colon within its first five characters (at most four hex digits,
    # then a colon); text with a later colon is refused either way.
    for i in range(min(length, 5)):
        if text[i] == c':':
            if not _parse_ipv6(text, length, hi, lo):
                return 0
            if hi[0] == 0 and (lo[0] >> 32) == 0xFFFF:
                return 4
            return 6
    if not _parse_ipv4(text, length, &v4):
        return 0
    hi[0] = 0
    lo[0] = MAPPED_LO | v4
    return 4



cdef inline int _parse_text(
    const char *text, Py_ssize_t length, uint64_t *hi, uint64_t *lo
) noexcept nogil:
    """Parse one address into its key; return 4 (IPv4 or mapped), 6, or 0 when refused.

    The SSE2 parser takes the usual text (plain dotted quads, IPv6 without an IPv4 tail);
    whatever it does not accept goes to the scalar parser, so both give the same answers.
    """
    cdef int family = cidr_fast_parse(text, length, hi, lo)
    if family:
        return family
    return _parse_text_scalar(text, length, hi, lo)


cdef extern from *:
    """
    /* A read prefetch into every cache level; a prefetch never faults. */
    static inline void cidr_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }
    /* 1 when a colon is among the first five characters (IPv6 text), else 0: a hint that sorts
       a batch by family before parsing, without a branch. Eight bytes are read at once when
       they stay within the text's memory page, and the bytes past the text are masked off. */
    static inline int cidr_colon_hint(const char *text, Py_ssize_t length) {
        uint64_t w = 0, x, keep;
        size_t take = length < 8 ? (size_t)length : 8u;
        if (((uintptr_t)text & 4095u) <= 4096u - 8u) memcpy(&w, text, 8);
        else memcpy(&w, text, take);
        keep = take >= 5u ? 0xFFFFFFFFFFULL : ((1ULL << (8u * take)) - 1ULL);
        x = (w ^ 0x3A3A3A3A3A3A3A3AULL) | ~keep;  /* a zero byte: a colon within the first five */
        return ((x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL) != 0;
    }
    /* Of the four (start, label) pairs of 32-bit words at runs, a bit for each start at or below
       address, in order. */
    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static inline uint32_t cidr_le_mask4(const void *runs, uint32_t address) {
        __m128 a = _mm_loadu_ps((const float *)runs), b = _mm_loadu_ps((const float *)runs + 4);
        __m128i starts = _mm_castps_si128(_mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
        __m128i bias = _mm_set1_epi32((int)0x80000000u);
        __m128i above = _mm_cmpgt_epi32(_mm_xor_si128(starts, bias),
                                        _mm_set1_epi32((int)(address ^ 0x80000000u)));
        return ~(uint32_t)_mm_movemask_ps(_mm_castsi128_ps(above)) & 15u;
    }
    #else
    static inline uint32_t cidr_le_mask4(const void *runs, uint32_t address) {
        const uint32_t *w = (const uint32_t *)runs;
        return (uint32_t)(w[0] <= address) | ((uint32_t)(w[2] <= address) << 1)
            | ((uint32_t)(w[4] <= address) << 2) | ((uint32_t)(w[6] <= address) << 3);
    }
    #endif
    /* The number of bits set in a 4-bit mask. */
    static inline uint32_t cidr_count4(uint32_t mask) {
        return (uint32_t)(0x4332322132212110ULL >> (4u * mask)) & 15u;
    }
    """
    void cidr_prefetch(const void *p) noexcept nogil
    uint32_t cidr_le_mask4(const void *runs, uint32_t address) noexcept nogil
    uint32_t cidr_count4(uint32_t mask) noexcept nogil
    int cidr_colon_hint(const char *text, Py_ssize_t length) noexcept nogil


cdef extern from "Python.h":
    bint PyUnicode_CheckExact(PyObject *o)
    bint PyUnicode_IS_COMPACT_ASCII(PyObject *o)
    void *PyUnicode_DATA(PyObject *o)
    Py_ssize_t PyUnicode_GET_LENGTH(PyObject *o)


cdef int _parse_object(object value, uint64_t *hi, uint64_t *lo):
    """Parse a str address into its key; 0 for anything else or anything refused."""
    cdef const char *text
    cdef Py_ssize_t length
    if not isinstance(value, str):
        return 0
    text = PyUnicode_AsUTF8AndSize(value, &length)
    return _parse_text(text, length, hi, lo)


cdef int _parse_network(object value, uint64_t *hi, uint64_t *lo):
    """Parse ``address`` or ``address/len`` into a key and return its key length, -1 if refused.

    A length after an address written as IPv4 counts from bit 96; after IPv6 text, from bit 0.
    Host bits set, a length with a leading zero and anything not plain ASCII are refused.
    """
    cdef const char *text
    cdef Py_ssize_t length, slash = -1, i
    cdef int written = 0, digits = 0
    cdef bint colon = False
    if not isinstance(value, str):
        return -1
    text = PyUnicode_AsUTF8AndSize(value, &length)
    for i in range(length):
        if text[i] == c'/':
            slash = i
            break
        if text[i] == c':':
            colon = True
    if slash < 0:
        return 128 if _parse_text(text, length, hi, lo) else -1
    if not _parse_text(text, slash, hi, lo):
        return -1
    for i in range(slash + 1, length):
        if text[i] < c'0' or text[i] > c'9' or digits == 3:
            return -1
        written = written * 10 + (text[i] - c'0')
        digits += 1
    if digits == 0 or (digits > 1 and text[slash + 1] == c'0'):
        return -1
    if not colon:
        if written > 32:
            return -1
        written += 96
    if written > 128:
        return -1
    if (hi[0] & _low_ones(64 - written)) != 0 or (lo[0] & _low_ones(128 - written)) != 0:
        return -1
    return written


def parse_networks(list values):
    """Return (keys uint64[n, 2], key lengths uint8[n], ok uint8[n]) for address/CIDR strings.

    ``ok[i]`` is 0 where the fast parser refused ``values[i]`` (not a str, not plain
    address text, a malformed length, host bits set); the caller decides those. Key
    lengths count from bit 0 of the 128-bit key: an IPv4 ``/n`` is ``96 + n``.
    """
    cdef Py_ssize_t n = len(values), i
    cdef uint64_t hi = 0, lo = 0
    cdef int plen
    keys = np.zeros((n, 2), dtype=np.uint64)
    plens = np.zeros(n, dtype=np.uint8)
    ok = np.zeros(n, dtype=np.uint8)
    cdef uint64_t[:, ::1] k = keys
    cdef uint8_t[::1] p = plens
    cdef uint8_t[::1] good = ok
    for i in range(n):
        plen = _parse_network(values[i], &hi, &lo)
        if plen < 0:
            continue
        k[i, 0] = hi
        k[i, 1] = lo
        p[i] = <uint8_t>plen
        good[i] = 1
    return keys, plens, ok


def parse_addresses(list values):
    """Return (keys uint64[n, 2], ok uint8[n]) for address strings; ok is 0 where refused."""
    cdef Py_ssize_t n = len(values), i
    cdef uint64_t hi = 0, lo = 0
    keys = np.zeros((n, 2), dtype=np.uint64)
    ok = np.zeros(n, dtype=np.uint8)
    cdef uint64_t[:, ::1] k = keys
    cdef uint8_t[::1] good = ok
    for i in range(n):
        if _parse_object(values[i], &hi, &lo):
            k[i, 0] = hi
            k[i, 1] = lo
            good[i] = 1
    return keys, ok


# --- building the interval table ------------------------------------------------------------


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef inline Py_ssize_t _emit(
    uint64_t[:, ::1] bounds, int32_t[::1] labels, Py_ssize_t count,
    uint64_t hi, uint64_t lo, int32_t label,
) noexcept nogil:
    """Start an interval labelled ``label`` at (hi, lo); merge with its neighbours."""
    if count > 0 and bounds[count - 1, 0] == hi and bounds[count - 1, 1] == lo:
        count -= 1  # a later change at the same point wins
    if count > 0 and labels[count - 1] == label:
        return count
    bounds[count, 0] = hi
    bounds[count, 1] = lo
    labels[count] = label
    return count + 1


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef inline Py_ssize_t _close(
    uint64_t[:, ::1] bounds, int32_t[::1] labels, Py_ssize_t count,
    uint64_t end_hi, uint64_t end_lo, int32_t outer,
) noexcept nogil:
    """End a prefix at (end_hi, end_lo): the next key belongs to ``outer`` again."""
    if end_lo != ALL_ONES:
        return _emit(bounds, labels, count, end_hi, end_lo + 1, outer)
    if end_hi != ALL_ONES:
        return _emit(bounds, labels, count, end_hi + 1, 0, outer)
    return count  # the prefix runs to the top of the key space


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef Py_ssize_t _sweep(
    const uint64_t[:, ::1] keys,
    const uint8_t[::1] plens,
    const int32_t[::1] entry,
    uint64_t[:, ::1] bounds,
    int32_t[::1] labels,
) noexcept nogil:
    """Turn prefixes sorted by (start, length, index) into labelled disjoint intervals.

    Prefixes are nested or disjoint, so the open ones form a stack of strictly growing length
    (at most 129 deep); the innermost open prefix labels the keys it covers.
    """
    cdef uint64_t start_hi[MAX_DEPTH]
    cdef uint64_t start_lo[MAX_DEPTH]
    cdef uint64_t end_hi[MAX_DEPTH]
    cdef uint64_t end_lo[MAX_DEPTH]
    cdef int depth_plen[MAX_DEPTH]
    cdef int32_t depth_label[MAX_DEPTH]
    cdef Py_ssize_t depth = 0, count = 0, i
    cdef uint64_t shi, slo, ehi, elo
    cdef int plen
    count = _emit(bounds, labels, count, 0, 0, -1)
    for i in range(keys.shape[0]):
        shi = keys[i, 0]
        slo = keys[i, 1]
        plen = plens[i]
        ehi = shi | _low_ones(64 - plen)
        elo = slo | _low_ones(128 - plen)
        while depth > 0 and not _le(shi, slo, end_hi[depth - 1], end_lo[depth - 1]):
            depth -= 1
            count = _close(
                bounds, labels, count, end_hi[depth], end_lo[depth],
                depth_label[depth - 1] if depth > 0 else -1,
            )
        if (
            depth > 0
            and start_hi[depth - 1] == shi
            and start_lo[depth - 1] == slo
            and depth_plen[depth - 1] == plen
        ):
            continue  # the same prefix again: the first (lowest index) keeps it
        start_hi[depth] = shi
        start_lo[depth] = slo
        end_hi[depth] = ehi
        end_lo[depth] = elo
        depth_plen[depth] = plen
        depth_label[depth] = entry[i]
        depth += 1
        count = _emit(bounds, labels, count, shi, slo, entry[i])
    while depth > 0:
        depth -= 1
        count = _close(
            bounds, labels, count, end_hi[depth], end_lo[depth],
            depth_label[depth - 1] if depth > 0 else -1,
        )
    return count


# Above this many intervals a table also keeps two bucket indexes, one over IPv4 and one over
# the span of the IPv6 interval starts (real ban lists sit in 2000::/3, so the top 16 bits of
# the key would leave most buckets empty). Each has one to two buckets an interval (2**16 to
# 2**20; twice that many measured no faster). A bucket names the interval holding its first key
# and that interval's label: when the next bucket names the same interval, the whole bucket lies
# in it and the lookup ends at the index, without touching the interval array; otherwise it
# bisects the few intervals between the two. IPv4 buckets name runs in ``runs4`` (the IPv4
# intervals again, as 32-bit start and label: 8 bytes an interval more) and compare the
# starts after their first four at once instead (``_search4``).
cdef Py_ssize_t INDEX_FROM = 512
cdef int MIN_INDEX_BITS = 16
cdef int MAX_INDEX_BITS = 20


ctypedef struct Bucket:
    uint32_t pos  # the last interval starting at or below the bucket's first key
    int32_t label  # that interval's label


ctypedef struct Run4:
    uint32_t start  # the IPv4 address the interval starts at (0 for the one holding 0.0.0.0)
    int32_t label


ctypedef struct Table:
    const uint64_t *bounds  # interval starts as (hi, lo) pairs; the first is zero
    const int32_t *labels
    Py_ssize_t count
    const Bucket *index4  # NULL, or 2**(32 - shift4) + 1 buckets over the IPv4 addresses
    const Run4 *runs4  # with index4: the intervals over IPv4 by 32-bit start (index4's pos)
    const Bucket *index6  # below base6, then last6 + 1 buckets of 2**shift6 from base6, an end
    int shift4
    int shift6
    uint64_t base6
    uint64_t last6  # keys past the span share bucket last6


cdef inline const Bucket *_bucket(const Table *table, uint64_t hi, uint64_t lo) noexcept nogil:
    """Return the key's bucket; the key's interval lies between it and the next one."""
    cdef uint64_t k
    if hi == 0 and (lo >> 32) == 0xFFFF:
        return table.index4 + <Py_ssize_t>((lo & 0xFFFFFFFFULL) >> table.shift4)
    if hi < table.base6:
        return table.index6
    k = (hi - table.base6) >> table.shift6
    if k > table.last6:
        k = table.last6
    return table.index6 + 1 + k


cdef inline const Bucket *_bucket4(const Table *table, uint32_t address) noexcept nogil:
    """Return an IPv4 address's bucket (the table has bucket indexes)."""
    return table.index4 + (address >> table.shift4)


cdef inline const Bucket *_bucket6(const Table *table, uint64_t hi) noexcept nogil:
    """Return the bucket of a key outside IPv4 (the table has bucket indexes)."""
    cdef uint64_t k
    if hi < table.base6:
        return table.index6
    k = (hi - table.base6) >> table.shift6
    if k > table.last6:
        k = table.last6
    return table.index6 + 1 + k


cdef inline int32_t _search4(const Table *table, uint32_t address) noexcept nogil:
    """``_search`` for an IPv4 key, in a table with bucket indexes: the bucket, then the few
    32-bit starts after the bucket's first interval compared four at once, with no branch on
    whether the bucket lies inside one interval (a coin toss across a batch of addresses)."""
    cdef const Bucket *bucket = _bucket4(table, address)
    cdef Py_ssize_t base = bucket[0].pos, size = <Py_ssize_t>bucket[1].pos - base + 1, half, mid
    cdef const Run4 *runs = table.runs4
    cdef uint32_t below
    if size <= 5:
        below = cidr_le_mask4(<const void *>(runs + base + 1), address) & ((1u << (size - 1)) - 1u)
        return runs[base + cidr_count4(below)].label
    while size > 1:
        half = size >> 1
        mid = base + half
        if runs[mid].start <= address:
            base = mid
        size -= half
    return runs[base].label


cdef inline int32_t _search(
    const Table *table, uint64_t hi, uint64_t lo
) noexcept nogil:
    """Return the label of the interval holding the key (some interval always does)."""
    cdef Py_ssize_t base = 0, size = table.count, half, mid
    cdef const uint64_t *bounds = table.bounds
    cdef const Bucket *bucket
    if table.index4 != NULL:
        if hi == 0 and (lo >> 32) == 0xFFFF:
            return _search4(table, <uint32_t>lo)
        bucket = _bucket(table, hi, lo)
        base = bucket[0].pos
        if bucket[1].pos == <uint32_t>base:
            return bucket[0].label
        size = <Py_ssize_t>bucket[1].pos - base + 1
    while size > 1:
        half = size >> 1
        mid = base + half
        if _le(bounds[2 * mid], bounds[2 * mid + 1], hi, lo):
            base = mid
        size -= half
    return table.labels[base]


cdef inline int32_t _bisect(
    const Table *table, Py_ssize_t base, Py_ssize_t size, uint64_t hi, uint64_t lo
) noexcept nogil:
    """Return the label of the last interval from ``base`` on (of ``size``) starting at or below
    the key."""
    cdef const uint64_t *bounds = table.bounds
    cdef Py_ssize_t half, mid
    while size > 1:
        half = size >> 1
        mid = base + half
        if _le(bounds[2 * mid], bounds[2 * mid + 1], hi, lo):
            base = mid
        size -= half
    return table.labels[base]


cdef inline int32_t _search6(const Table *table, uint64_t hi, uint64_t lo) noexcept nogil:
    """``_search`` for a key outside IPv4, in a table with bucket indexes."""
    cdef const Bucket *bucket = _bucket6(table, hi)
    cdef Py_ssize_t base = bucket[0].pos
    if bucket[1].pos == <uint32_t>base:
        return bucket[0].label
    return _bisect(table, base, <Py_ssize_t>bucket[1].pos - base + 1, hi, lo)


cdef inline Py_ssize_t _fill(
    const Table *table, Bucket *bucket, Py_ssize_t j, uint64_t hi, uint64_t lo
) noexcept nogil:
    """Point ``bucket`` at the last interval starting at or below (hi, lo), from ``j`` on."""
    while j + 1 < table.count and _le(
        table.bounds[2 * j + 2], table.bounds[2 * j + 3], hi, lo
    ):
        j += 1
    bucket.pos = <uint32_t>j
    bucket.label = table.labels[j]
    return j


cdef void _build_index(const Table *table, Bucket *index4, Bucket *index6) noexcept nogil:
    """Fill both indexes; bucket keys rise, so one walk over the intervals fills each."""
    cdef Py_ssize_t j = 0
    cdef uint64_t b, start, step
    for b in range((<uint64_t>1 << (32 - table.shift4)) + 1):  # the last: the end of IPv4
        j = _fill(table, &index4[b], j, 0, MAPPED_LO + (b << table.shift4))
    j = _fill(table, &index6[0], 0, 0, 0)
    for b in range(table.last6 + 1):
        step = b << table.shift6
        start = table.base6 + step
        if (step >> table.shift6) != b or start < table.base6:  # past the top of the key space
            j = _fill(table, &index6[1 + b], j, ALL_ONES, ALL_ONES)
        else:
            j = _fill(table, &index6[1 + b], j, start, 0)
    _fill(table, &index6[table.last6 + 2], j, ALL_ONES, ALL_ONES)


cdef enum:
    C_RUN_AHEAD = 8  # keys whose intervals a search run requests ahead of the one it searches


cdef void _search_run4(
    const Table *table, const uint32_t *addresses, const int32_t *where, Py_ssize_t count,
    int32_t *labels,
) noexcept nogil:
    """Search IPv4 keys (a table with bucket indexes) into ``labels[where[k]]``.

    The lookups depend on two reads from a few megabytes (the bucket, then its runs), which a
    plain loop waits for; so each key's bucket is requested when the key is parsed
    (``cidr_run4``), and its runs C_RUN_AHEAD keys ahead of the search, its bucket read by then.
    """
    cdef Py_ssize_t k
    cdef const Run4 *run
    for k in range(count):
        if k + C_RUN_AHEAD < count:
            run = table.runs4 + _bucket4(table, addresses[k + C_RUN_AHEAD])[0].pos
            cidr_prefetch(run)
            cidr_prefetch(run + 4)
        labels[where[k]] = _search4(table, addresses[k])


cdef void _search_run6(
    const Table *table, const uint64_t *keys, const int32_t *where, Py_ssize_t count,
    int32_t *labels,
) noexcept nogil:
    """Search keys outside IPv4 (a table with bucket indexes) into ``labels[where[k]]``, the
    bucket requested at the parse (``cidr_run6``) and the intervals ahead as in
    ``_search_run4``."""
    cdef Py_ssize_t k, j
    for k in range(count):
        if k + C_RUN_AHEAD < count:
            j = _bucket6(table, keys[2 * (k + C_RUN_AHEAD)])[0].pos
            cidr_prefetch(table.bounds + 2 * j)
            cidr_prefetch(table.labels + j)
        labels[where[k]] = _search6(table, keys[2 * k], keys[2 * k + 1])


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef void _search_many(const Table *table, const uint64_t[:, ::1] keys, int32_t[::1] out) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(keys.shape[0]):
        out[i] = _search(table, keys[i, 0], keys[i, 1])


BUCKET_DTYPE = np.dtype([("pos", np.uint32), ("label", np.int32)])


def _ipv6_span(bounds, int bits):
    """Return (shift, base, last bucket) so that the IPv6 interval starts span the buckets.

    Keys below ``base`` share a bucket of their own, and so do keys past the last bucket.
    """
    his = bounds[:, 0]
    starts = his[his != 0]
    if starts.size == 0:
        return 64 - bits, 0, (1 << bits) - 1
    low, high = int(starts.min()), int(starts.max())
    shift = max((high - low).bit_length() - bits, 0)
    base = (low >> shift) << shift
    return shift, base, (high - base) >> shift


RUN4_PADDING = 4  # runs past the last, so four starts can be read after any run


def _ipv4_runs(bounds, labels, index4):
    """Return the intervals over IPv4 as (start, label) pairs of 32-bit words, and point the
    IPv4 buckets at them instead of at the 128-bit intervals.

    The first run is the interval holding 0.0.0.0 (its start read as 0), the last the one
    holding 255.255.255.255; four padding runs follow (never counted: a bucket's runs end at
    the next bucket's).
    """
    positions = index4["pos"]
    first = int(positions[0])
    top = MAPPED_LO | 0xFFFFFFFF
    last = int(np.count_nonzero((bounds[:, 0] == 0) & (bounds[:, 1] <= np.uint64(top)))) - 1
    count = last - first + 1
    runs = np.full(2 * (count + RUN4_PADDING), 0xFFFFFFFF, dtype=np.uint32)
    starts = bounds[first : last + 1, 1] - np.uint64(MAPPED_LO)
    starts[0] = 0
    runs[0 : 2 * count : 2] = starts.astype(np.uint32)
    runs[1 : 2 * count : 2] = labels[first : last + 1].view(np.uint32)
    index4["pos"] = np.minimum(positions, last) - first
    return runs


def _check_prefixes(const uint64_t[:, ::1] keys, const uint8_t[::1] plens):
    """Raise ValueError unless keys are (n, 2), lengths n values of 0..128 and no host bits set."""
    cdef Py_ssize_t i
    cdef int plen
    if keys.shape[1] != 2:
        raise ValueError(f"keys must have shape (n, 2), got (n, {keys.shape[1]})")
    if plens.shape[0] != keys.shape[0]:
        raise ValueError(f"{keys.shape[0]} keys but {plens.shape[0]} prefix lengths")
    for i in range(keys.shape[0]):
        plen = plens[i]
        if plen > 128:
            raise ValueError(f"prefix length {plen} at index {i} is over 128")
        if (keys[i, 0] & _low_ones(64 - plen)) or (keys[i, 1] & _low_ones(128 - plen)):
            raise ValueError(f"prefix at index {i} has host bits set beyond /{plen}")


cdef inline (Py_ssize_t, Py_ssize_t) _place(
    int family, int32_t j, uint64_t hi, uint64_t lo, uint32_t *v4, int32_t *at4,
    uint64_t *key6, int32_t *at6, int32_t *labels, Py_ssize_t n4, Py_ssize_t n6,
) noexcept nogil:
    """File item ``j`` of a chunk for the search: an IPv4 address in ``v4``, another key in
    ``key6``, refused ones nowhere (labelled -2, which a search overwrites for the others).
    Both slots are written and one count moves: no branch on the family. The slots are free:
    items before ``j`` took at most ``j`` of them."""
    v4[n4] = <uint32_t>lo
    at4[n4] = j
    key6[2 * n6] = hi
    key6[2 * n6 + 1] = lo
    at6[n6] = j
    labels[j] = C_NOT_PARSED
    return n4 + (family == 4), n6 + (family == 6)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _find_chunk(
    const Table *table, list values, Py_ssize_t start, Py_ssize_t stop, int32_t *labels,
) except -1:
    """Label items ``start`` to ``stop`` (at most C_CHUNK) of ``values`` into ``labels[0:]``.

    Every buffer is on the stack and stays in L1: the text pointers, the family picks, the
    parsed IPv4 addresses and IPv6 keys with the item each belongs to, and the labels.
    """
    cdef Py_ssize_t n = len(values), i, k, c4 = 0, c6 = 0, n4 = 0, n6 = 0, taken, missed
    cdef int32_t j
    cdef PyObject *item
    cdef int family, six
    cdef uint64_t hi = 0, lo = 0
    cdef const char *texts[C_CHUNK]
    cdef Py_ssize_t lengths[C_CHUNK]
    cdef int32_t pick4[C_CHUNK]
    cdef int32_t pick6[C_CHUNK]
    cdef int32_t miss4[C_CHUNK]
    cdef int32_t miss6[C_CHUNK]
    cdef uint32_t v4[C_CHUNK]
    cdef int32_t at4[C_CHUNK]
    cdef uint64_t key6[2 * C_CHUNK]
    cdef int32_t at6[C_CHUNK]
    for i in range(start, stop):
        if i + C_AHEAD < n:  # the str objects of a batch lie anywhere in memory
            item = PyList_GET_ITEM(values, i + C_AHEAD)
            cidr_prefetch(item)  # the header and the text's start
            cidr_prefetch((<const char *>item) + 64)  # the rest of a long IPv6 text
        item = PyList_GET_ITEM(values, i)
        j = <int32_t>(i - start)
        if PyUnicode_CheckExact(item) and PyUnicode_IS_COMPACT_ASCII(item):
            texts[j] = <const char *>PyUnicode_DATA(item)
            lengths[j] = PyUnicode_GET_LENGTH(item)
            six = cidr_colon_hint(texts[j], lengths[j])
            pick4[c4] = j
            pick6[c6] = j
            c4 += 1 - six
            c6 += six
        else:
            family = _parse_object(<object>item, &hi, &lo)
            n4, n6 = _place(family, j, hi, lo, v4, at4, key6, at6, labels, n4, n6)
    # The IPv4 texts go straight into v4/at4; the few the fast parser leaves are listed apart.
    # Each IPv4 address's bucket is requested as soon as it is parsed: it arrives while the
    # rest of the chunk is parsed, before its search.
    taken = cidr_run4(
        texts, lengths, pick4, c4, v4 + n4, at4 + n4, miss4, &missed,
        <const uint64_t *>table.index4, table.shift4,
    )
    n4 += taken
    for k in range(missed):
        j = miss4[k]
        family = _parse_text(texts[j], lengths[j], &hi, &lo)
        n4, n6 = _place(family, j, hi, lo, v4, at4, key6, at6, labels, n4, n6)
    # The same for the IPv6 texts; an IPv4-mapped one is among those left (its key is IPv4's).
    taken = cidr_run6(
        texts, lengths, pick6, c6, key6 + 2 * n6, at6 + n6, miss6, &missed,
        <const uint64_t *>table.index6, table.base6, table.shift6, table.last6,
    )
    n6 += taken
    for k in range(missed):
        j = miss6[k]
        family = _parse_text(texts[j], lengths[j], &hi, &lo)
        n4, n6 = _place(family, j, hi, lo, v4, at4, key6, at6, labels, n4, n6)
    if table.index4 == NULL:
        for k in range(n4):
            labels[at4[k]] = _search(table, 0, MAPPED_LO | <uint64_t>v4[k])
        for k in range(n6):
            labels[at6[k]] = _search(table, key6[2 * k], key6[2 * k + 1])
    else:
        _search_run4(table, v4, at4, n4, labels)
        _search_run6(table, key6, at6, n6, labels)
    return 0


cdef class PrefixTable:
    """Longest-prefix match over 128-bit keys; labels are the indexes of the given prefixes."""

    cdef object _bounds_array
    cdef object _labels_array
    cdef object _index_array
    cdef object _runs4_array
    # Raw views of the arrays above (which keep them alive): no memoryview bookkeeping on the
    # per-call path.
    cdef Table _table
    cdef readonly Py_ssize_t prefix_count

    def __init__(self, keys, plens):
        """Build from keys uint64[n, 2] (hi, lo) and key lengths uint8[n] (0..128).

        Index ``i`` labels prefix ``i``; of equal prefixes the first keeps the label.
        """
        key_array = np.ascontiguousarray(keys, dtype=np.uint64).reshape(-1, 2)
        plen_array = np.ascontiguousarray(plens, dtype=np.uint8)
        _check_prefixes(key_array, plen_array)
        cdef Py_ssize_t n = key_array.shape[0]
        # The IPv4 hole goes last, so a real prefix of the same extent sorts before it.
        all_keys = np.concatenate([key_array, np.array([[0, MAPPED_LO]], dtype=np.uint64)])
        all_plens = np.concatenate([plen_array, np.array([MAPPED_PREFIX_LEN], dtype=np.uint8)])
        order = np.lexsort((np.arange(n + 1), all_plens, all_keys[:, 1], all_keys[:, 0]))
        sorted_keys = np.ascontiguousarray(all_keys[order])
        sorted_plens = np.ascontiguousarray(all_plens[order])
        entry = np.where(order == n, -1, order).astype(np.int32)
        bounds = np.empty((2 * (n + 1) + 1, 2), dtype=np.uint64)
        labels = np.empty(2 * (n + 1) + 1, dtype=np.int32)
        cdef const uint64_t[:, ::1] k = sorted_keys
        cdef const uint8_t[::1] p = sorted_plens
        cdef const int32_t[::1] e = entry
        cdef uint64_t[:, ::1] b = bounds
        cdef int32_t[::1] lab = labels
        cdef Py_ssize_t count
        with nogil:
            count = _sweep(k, p, e, b, lab)
        # BOUNDS_PADDING rows past the last, so the starts after any interval can be read at
        # once (``_search6``); they are never counted.
        self._bounds_array = np.ascontiguousarray(bounds[:count])
        self._labels_array = np.ascontiguousarray(labels[:count])
        cdef const uint64_t[:, ::1] bounds_view = self._bounds_array
        cdef const int32_t[::1] labels_view = self._labels_array
        cdef Bucket[::1] index_view
        cdef uint32_t[::1] runs_view
        cdef Bucket *index_start
        self._table.bounds = &bounds_view[0, 0]
        self._table.labels = &labels_view[0]
        self._table.count = count
        self._table.index4 = NULL
        self._table.runs4 = NULL
        self._runs4_array = None
        self._table.index6 = NULL
        self._index_array = None
        cdef int bits
        cdef Py_ssize_t size4, size6
        if count > INDEX_FROM:
            bits = min(max((<object>count).bit_length(), MIN_INDEX_BITS), MAX_INDEX_BITS)
            self._table.shift4 = 32 - bits
            self._table.shift6, self._table.base6, self._table.last6 = _ipv6_span(
                self._bounds_array, bits
            )
            size4 = (1 << bits) + 1
            size6 = <Py_ssize_t>self._table.last6 + 3
            self._index_array = np.zeros(2 * (size4 + size6), dtype=np.uint32)
            index_view = self._index_array.view(BUCKET_DTYPE)
            index_start = &index_view[0]
            with nogil:
                _build_index(&self._table, index_start, index_start + size4)
            self._runs4_array = _ipv4_runs(
                self._bounds_array, self._labels_array,
                self._index_array.view(BUCKET_DTYPE)[:size4],
            )
            runs_view = self._runs4_array
            self._table.runs4 = <const Run4 *>&runs_view[0]
            self._table.index4 = index_start
            self._table.index6 = index_start + size4
        self.prefix_count = n

    def __len__(self):
        """Return the number of intervals the prefixes cut the key space into."""
        return self._table.count

    def intervals(self):
        """Return copies of (interval starts uint64[m, 2], labels int32[m])."""
        return self._bounds_array.copy(), self._labels_array.copy()

    def find(self, value):
        """Return the label for an address string, -1 when nothing covers it, -2 if refused."""
        cdef uint64_t hi = 0, lo = 0
        if not _parse_object(value, &hi, &lo):
            return NOT_PARSED
        return _search(&self._table, hi, lo)

    def find_key(self, uint64_t hi, uint64_t lo):
        """Return the label for a key, -1 when nothing covers it."""
        return _search(&self._table, hi, lo)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def find_many(self, list values):
        """Return int32 labels for a list of address strings: -1 no match, -2 refused.

        No Python object per item and no array but the result. The items are taken a chunk
        of C_CHUNK at a time, every buffer of the chunk on the stack (``_find_chunk``): each
        plain ASCII str (which every address text is) is read in place and sorted by family (a
        colon among its first characters), the chunk's IPv4 texts are parsed in one run and its
        IPv6 texts in another, anything else going through the same checks as ``find``; then
        the chunk's IPv4 keys are searched in one run and the others in another. Sorting by
        family first keeps the branches on it out of the parse and the search, where a random
        mix of families would mispredict them every other address. The GIL stays held: the
        str objects are read in place.
        """
        cdef Py_ssize_t n = len(values), start
        out = np.empty(n, dtype=np.int32)
        if n == 0:
            return out
        cdef int32_t[::1] view = out
        cdef int32_t *labels = &view[0]
        for start in range(0, n, C_CHUNK):
            _find_chunk(&self._table, values, start, min(start + C_CHUNK, n), labels + start)
        return out

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def contains_many(self, list values):
        """Return (covered bool[n], refused): ``find_many``'s labels as membership, and how many
        items it refused (those read False here; the caller decides them).

        Each chunk is labelled into a buffer on the stack and turned into bools from there: no
        label array."""
        cdef Py_ssize_t n = len(values), start, stop, j, refused = 0
        cdef int32_t labels[C_CHUNK]
        out = np.empty(n, dtype=np.bool_)
        if n == 0:
            return out, 0
        cdef uint8_t[::1] out_view = out.view(np.uint8)
        cdef uint8_t *covered = &out_view[0]
        for start in range(0, n, C_CHUNK):
            stop = min(start + C_CHUNK, n)
            _find_chunk(&self._table, values, start, stop, labels)
            for j in range(stop - start):
                covered[start + j] = labels[j] >= 0
                refused += labels[j] == C_NOT_PARSED
        return out, refused

    def find_keys(self, const uint64_t[:, ::1] keys):
        """Return int32 labels for keys uint64[n, 2]; releases the GIL while searching."""
        if keys.shape[1] != 2:
            raise ValueError(f"keys must have shape (n, 2), got (n, {keys.shape[1]})")
        out = np.empty(keys.shape[0], dtype=np.int32)
        cdef int32_t[::1] view = out
        with nogil:
            _search_many(&self._table, keys, view)
        return out
