"""BanTable against a brute-force ipaddress oracle; the compiled kernel against its reference."""

from __future__ import annotations

import ipaddress
import itertools
import random
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alertstation._native import cidr as native_cidr
from alertstation.security import bantable
from alertstation.security.bantable import BanTable
from tests.support import run_without_kernel

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
SEED = 20261121


# --- the oracle: every entry tried, written straight from the documented rules -------------


def fold_network(network: Network) -> Network:
    """An IPv6 range inside ::ffff:0:0/96 is the IPv4 range it maps."""
    if network.version == 6 and network.prefixlen >= 96:
        mapped = network.network_address.ipv4_mapped
        if mapped is not None:
            return ipaddress.IPv4Network(f"{mapped}/{network.prefixlen - 96}")
    return network


def fold_address(address: Address) -> Address:
    if address.version == 6 and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class Oracle:
    """Longest match by trying every entry; ties go to the first; families never mix."""

    def __init__(self, values: list[str]) -> None:
        self._spans = []
        for value in values:
            network = fold_network(ipaddress.ip_network(value))
            start = int(network.network_address)
            self._spans.append(
                (network.version, start, int(network.broadcast_address), network.prefixlen)
            )

    def index(self, query: str) -> int:
        address = fold_address(ipaddress.ip_address(query))
        version, number = address.version, int(address)
        best, best_length = -1, -1
        for position, (family, start, end, length) in enumerate(self._spans):
            if family == version and start <= number <= end and length > best_length:
                best, best_length = position, length
        return best


# --- random tables whose entries nest, touch and repeat ------------------------------------


def _masked(address: Address, length: int) -> Network:
    return ipaddress.ip_network(f"{address}/{length}", strict=False)


def random_table(rng: random.Random, size: int) -> tuple[list[str], list[Address]]:
    """Return entry texts and the seed addresses they were cut from."""
    seeds: list[Address] = []
    for _ in range(4):
        seeds.append(
            ipaddress.IPv4Address(rng.choice([0x0A000000, 0xC0000200, 0]) + rng.getrandbits(20))
        )
        seeds.append(
            ipaddress.IPv6Address((0x20010DB8 << 96) + rng.getrandbits(rng.choice([16, 64, 96])))
        )
    seeds.append(ipaddress.IPv6Address(rng.getrandbits(128)))
    values: list[str] = []
    for _ in range(size):
        seed = rng.choice(seeds)
        roll = rng.random()
        if roll < 0.05:
            values.append(rng.choice(["0.0.0.0/0", "::/0", "::ffff:0:0/96", "::/1", "2000::/3"]))
            continue
        length = (
            rng.randint(0, seed.max_prefixlen)
            if roll < 0.2
            else rng.randint(seed.max_prefixlen // 2, seed.max_prefixlen)
        )
        network = _masked(seed, length)
        if network.version == 4 and rng.random() < 0.15:  # the same range written as mapped IPv6
            mapped = ipaddress.IPv6Address((0xFFFF << 32) | int(network.network_address))
            values.append(f"{mapped}/{network.prefixlen + 96}")
        elif network.prefixlen == network.max_prefixlen and rng.random() < 0.5:
            values.append(str(network.network_address))
        else:
            values.append(str(network))
    if values and rng.random() < 0.5:
        values.append(rng.choice(values))  # an exact duplicate: the first keeps the match
    return values, seeds


def random_queries(
    rng: random.Random, values: list[str], seeds: list[Address], count: int
) -> list[str]:
    """Return addresses at and around range edges, near the seeds, anywhere, and mapped forms."""
    networks = [ipaddress.ip_network(value) for value in values] or [ipaddress.ip_network("::/0")]
    queries: list[str] = []
    while len(queries) < count:
        roll = rng.random()
        if roll < 0.35:
            network = rng.choice(networks)
            top = (1 << network.max_prefixlen) - 1
            edge = rng.choice(
                [
                    int(network.network_address),
                    int(network.broadcast_address),
                    int(network.network_address) - 1,
                    int(network.broadcast_address) + 1,
                ]
            )
            address: Address = (
                ipaddress.ip_address(min(max(edge, 0), top))
                if network.version == 4
                else ipaddress.IPv6Address(min(max(edge, 0), top))
            )
        elif roll < 0.75:
            seed = rng.choice(seeds)
            bits = rng.choice([4, 8, 16, 24])
            top = (1 << seed.max_prefixlen) - 1
            number = int(seed) ^ rng.getrandbits(bits)
            address = type(seed)(min(number, top))
        elif roll < 0.9:
            address = ipaddress.IPv4Address(rng.getrandbits(32))
        else:
            address = ipaddress.IPv6Address(rng.getrandbits(128))
        if address.version == 4 and rng.random() < 0.2:
            queries.append(f"::ffff:{address}")
        else:
            queries.append(str(address))
    return queries


def test_agrees_with_brute_force_oracle_on_100k_random_queries() -> None:
    rng = random.Random(SEED)
    checked = matched = 0
    for round_number in range(50):
        values, seeds = random_table(rng, rng.choice([0, 1, 5, 20, 60, 120]))
        table = BanTable(values)
        reference = bantable.ReferencePrefixTable(*bantable.reference_parse_networks(values)[:2])
        oracle = Oracle(values)
        queries = random_queries(rng, values, seeds, 2000)
        expected = np.array([oracle.index(query) for query in queries], dtype=np.int32)
        got = table.indexes(queries)
        assert np.array_equal(got, expected), round_number
        assert np.array_equal(table.contains_many(queries), expected >= 0)
        assert [reference.find(query) for query in queries[:300]] == expected[:300].tolist()
        for query, want in zip(queries[:200], expected[:200].tolist(), strict=True):
            assert table.index_of(query) == want
            assert table.contains(query) is (want >= 0)
            assert table.lookup(query) == (values[want] if want >= 0 else None)
        checked += len(queries)
        matched += int((expected >= 0).sum())
    assert checked == 100_000
    assert 0.2 * checked < matched < 0.9 * checked, "queries should hit and miss in fair shares"


def test_large_tables_use_the_bucket_index_and_still_agree() -> None:
    rng = random.Random(SEED + 1)
    values = []
    for _ in range(6000):
        if rng.random() < 0.6:
            address: Address = ipaddress.IPv4Address(rng.getrandbits(32))
            length = rng.choice([8, 12, 15, 16, 17, 20, 24, 28, 31, 32])
        else:
            address = ipaddress.IPv6Address(rng.getrandbits(128) >> rng.choice([0, 1, 16, 80]))
            length = rng.choice([1, 7, 15, 16, 17, 32, 48, 64, 96, 127, 128])
        values.append(str(_masked(address, length)))
    values += ["0.0.0.0/1", "::/0", "ffff::/16", "::ffff:0:0/97", "0::/16"]
    table = BanTable(values)
    assert len(table._table) > 512, "big enough to carry the bucket index"
    reference = bantable.ReferencePrefixTable(*bantable.reference_parse_networks(values)[:2])
    queries = random_queries(
        rng, values, [ipaddress.ip_network(v).network_address for v in values[:50]], 20_000
    )
    edges = []
    for bucket in (0, 1, 255, 256, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF):
        for delta in (-1, 0, 1):
            edges.append(str(ipaddress.IPv4Address(((bucket << 16) + delta) % (1 << 32))))
            edges.append(str(ipaddress.IPv6Address(((bucket << 112) + delta) % (1 << 128))))
    queries += edges
    expected = [reference.find(query) for query in queries]
    assert table.indexes(queries).tolist() == expected
    oracle = Oracle(values)
    assert [oracle.index(query) for query in queries[:150] + edges] == expected[:150] + expected[
        -len(edges) :
    ]


@pytest.mark.parametrize("span", ["narrow", "ipv4-only"])
def test_bucket_indexes_cover_keys_below_inside_and_past_the_ipv6_span(span: str) -> None:
    # The IPv6 index spreads its buckets over the span of the table's IPv6 starts (real lists
    # sit in 2000::/3). Keys below that span, past it, with a zero top word and at its edges
    # share catch-all buckets; a bucket inside one interval answers without a bisection.
    rng = random.Random(SEED + 2)
    values = []
    for _ in range(3000):
        address: Address = ipaddress.IPv4Address(rng.getrandbits(32))
        values.append(str(_masked(address, rng.choice([16, 24, 30, 32]))))
        if span == "narrow":
            address = ipaddress.IPv6Address((0x20010DB8 << 96) | rng.getrandbits(96 - 8))
            values.append(str(_masked(address, rng.choice([40, 48, 64, 100, 128]))))
    table = BanTable(values)
    assert len(table._table) > 512, "big enough to carry the bucket indexes"
    reference = bantable.ReferencePrefixTable(*bantable.reference_parse_networks(values)[:2])
    seeds = [ipaddress.ip_network(value).network_address for value in values[:100]]
    queries = random_queries(rng, values, seeds, 5000)
    queries += ["::", "::1", "::2:0:0", "::fffe:ffff:ffff", "::1:0:0:0", "1::", "2000::"]
    queries += ["2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::", "2001:db8:ff::1"]
    queries += ["2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::", "3fff::", "ffff::"]
    queries += ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "0.0.0.0", "255.255.255.255"]
    expected = [reference.find(query) for query in queries]
    assert table.indexes(queries).tolist() == expected
    assert [table.index_of(query) for query in queries] == expected
    assert sum(1 for label in expected if label >= 0) > 100, "queries should hit entries"


class Text(str):
    """A str subclass: not read in place by the batch path, still an address."""


def _edge_entries() -> list[str]:
    """Every prefix length of both families at both ends of each, and crowded buckets."""
    values = []
    for length in range(33):
        values.append(str(ipaddress.ip_network(f"0.0.0.0/{length}")))
        values.append(str(_masked(ipaddress.IPv4Address("255.255.255.255"), length)))
        values.append(str(_masked(ipaddress.IPv4Address("100.64.0.0"), length)))
    for length in range(129):
        values.append(str(ipaddress.ip_network(f"::/{length}")))
        values.append(str(_masked(ipaddress.IPv6Address((1 << 128) - 1), length)))
        values.append(str(_masked(ipaddress.IPv6Address("2001:db8::"), length)))
    # One /24 holding many singles (a bucket with far more than four intervals), and buckets
    # holding exactly one to five interval starts after the first.
    values += [f"198.51.100.{host}" for host in range(0, 256, 3)]
    for count in range(1, 6):
        values += [f"203.0.{count}.{16 * step + 1}" for step in range(count)]
    values += [f"10.{count}.0.0/16" for count in range(200)]  # enough for the bucket indexes
    return values


def test_every_prefix_length_at_the_edges_answers_in_batch_as_per_call() -> None:
    # The batch path sorts a chunk by family, searches IPv4 keys by 32-bit interval starts
    # (four compared at once after the bucket, a bisection when more) and requests buckets
    # ahead. Entries of every length /0../32 and /0../128 at the edges of both families, a
    # crowded /24 and buckets with one to five starts must answer as the reference does.
    values = _edge_entries()
    table = BanTable(values)
    assert len(table._table) > 512, "big enough to carry the bucket indexes"
    reference = bantable.ReferencePrefixTable(*bantable.reference_parse_networks(values)[:2])
    queries = []
    for value in values:
        network = ipaddress.ip_network(value)
        top = (1 << network.max_prefixlen) - 1
        for number in (
            int(network.network_address) - 1,
            int(network.network_address),
            int(network.network_address) + 1,
            int(network.broadcast_address),
            int(network.broadcast_address) + 1,
        ):
            address = ipaddress.ip_address(number % (top + 1))
            if network.version == 6:
                address = ipaddress.IPv6Address(number % (top + 1))
            queries.append(str(address))
    for shift in range(12, 21):  # bucket edges for every index size
        for bucket in (0, 1, 2, (1 << (32 - shift)) - 1):
            for delta in (-1, 0, 1):
                queries.append(str(ipaddress.IPv4Address(((bucket << shift) + delta) % (1 << 32))))
    queries += [f"::ffff:{query}" for query in queries[:400] if "." in query]
    expected = [reference.find(query) for query in queries]
    assert table.indexes(queries).tolist() == expected
    assert [table.index_of(query) for query in queries] == expected
    assert table.contains_many(queries).tolist() == [label >= 0 for label in expected]
    oracle = Oracle(values)
    sample = random.Random(SEED + 30).sample(range(len(queries)), 300)
    assert [oracle.index(queries[i]) for i in sample] == [expected[i] for i in sample]


@pytest.fixture(params=["ssse3", "sse2"])
def batch_parsers(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run a test with the batch's SSSE3 parsers (dotted quads, IPv6 groups read in pairs),
    then without them (SSE2)."""
    native_cidr._use_ssse3(request.param == "ssse3")
    try:
        yield request.param
    finally:
        native_cidr._use_ssse3(True)


OCTETS = ["0", "7", "00", "01", "09", "10", "99", "000", "010", "100", "199", "249", "250", "255"]
OCTETS += ["256", "260", "299", "300", "999", "1000", ""]


def test_every_dotted_quad_layout_reads_in_batch_as_per_call(batch_parsers: str) -> None:
    # The batch's SSSE3 parser picks each dotted quad's layout by a hash of where its dots are:
    # every layout of octets 0 to 4 digits long (empty, leading zeros, over 255) must be read,
    # or refused, as the per-call parser does.
    rng = random.Random(SEED)
    kernel = BanTable(_edge_entries())._table
    texts = [".".join(rng.choice(OCTETS) for _ in range(4)) for _ in range(20_000)]
    texts += [
        ".".join(octets) for octets in itertools.product(["7", "99", "255", "01", ""], repeat=4)
    ]
    texts += [text + "." for text in texts[:50]] + ["1.2.3", "1.2.3.4.5", "1.2.3.4x"]
    labels = kernel.find_many(texts)
    assert labels.tolist() == [kernel.find(text) for text in texts]
    read = [text for text, label in zip(texts, labels, strict=True) if label != -2]
    assert all(str(ipaddress.IPv4Address(text)) == text for text in read)
    assert len(read) > 500  # about 3 % of the random ones are addresses


def usual_ipv6(rng: random.Random, short: int) -> str:
    """An IPv6 text of eight groups, ``short`` of them three digits long, the rest four."""
    narrow = set(rng.sample(range(8), short))
    groups = [
        rng.randrange(0x100, 0x1000) if g in narrow else rng.randrange(0x1000, 0x10000)
        for g in range(8)
    ]
    text = ":".join(f"{group:x}" for group in groups)
    return text.upper() if rng.random() < 0.2 else text


def test_ipv6_in_the_usual_layouts_and_their_near_misses_read_in_batch_as_per_call(
    batch_parsers: str,
) -> None:
    # 37 to 39 characters with colons where eight groups of three or four digits put them take
    # the batch's shortest path (SSSE3): every character of such a text swapped for a near miss
    # must be read as per call.
    rng = random.Random(SEED)
    kernel = BanTable(_edge_entries())._table
    usual = [usual_ipv6(rng, short) for short in (0, 1, 2, 3) for _ in range(60)]
    usual += ["0000:0000:0000:0000:0000:ffff:0a03:0201", "FFFF:abcd:ABCD:0000:0000:0000:0000:0001"]
    texts = list(usual)
    for text in usual[::6]:
        for place in range(len(text)):
            for swap in ":gG/ x0f.":
                texts.append(text[:place] + swap + text[place + 1 :])
            texts.append(text[:place] + text[place + 1 :])
            texts.append(text[:place] + "0" + text[place:])
    labels = kernel.find_many(texts)
    assert labels.tolist() == [kernel.find(text) for text in texts]
    assert (labels[: len(usual)] != -2).all()


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.text(alphabet="0123456789.", min_size=1, max_size=17), max_size=40))
def test_digit_and_dot_texts_read_in_batch_as_per_call(texts: list[str]) -> None:
    kernel = BanTable(_edge_entries())._table
    assert kernel.find_many(texts).tolist() == [kernel.find(text) for text in texts]


@pytest.mark.parametrize("count", [1, 255, 256, 257, 769])
def test_batches_sorted_by_family_answer_in_place(count: int, batch_parsers: str) -> None:
    # The batch takes 256 items at a time, files IPv4 and IPv6 text in separate runs and
    # searches each family in its own run; every answer must land at its item's position,
    # whatever the mix, across chunk edges, with refusals and non-text items among them.
    rng = random.Random(SEED + count)
    values = _edge_entries()
    table = BanTable(values)
    kernel = table._table
    pool: list[object] = [
        "198.51.100.3",
        "203.0.5.49",
        "0.0.0.0",
        "255.255.255.255",
        "2001:db8::1",
        "::",
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "::ffff:10.3.2.1",
        "::ffff:a03:201",
        "1:2:3:4:5:6:1.2.3.4",
        "10.300.0.1",
        "1.2.3",
        "::1::",
        "",
        "2001:db8::/32",
        7,
        None,
        Text("10.9.9.9"),
        b"10.1.2.3",
        # Dotted quads of every octet width (picked by a shuffle table) and near misses.
        "1.22.133.4",
        "255.0.10.199",
        "100.200.249.255",
        "01.2.3.4",
        "1.2.3.04",
        "1.2.3.256",
        "1.2.300.4",
        "1..2.3",
        "1.2.3.4.",
        ".1.2.3.4",
        "1234.1.1.1",
        "1.2.3.4.5",
        "25a.1.1.1",
        "1.2.3.4 ",
        "1.2.3.4\x00",
        # Written out in full (39 characters, read at fixed places) and near misses of it.
        "2001:0db8:0000:0000:0000:ffff:0a03:0201",
        "0000:0000:0000:0000:0000:ffff:0a03:0201",
        "2001:0db8:0000:0000:0000:0000:0000:000g",
        "2001:0db8:0000:0000:0000:0000:00000:000",
        "2001:0db8:0000:0000:0000:0000:0000:00001",
        ":2001:db8:0000:0000:0000:0000:0000:0001",
        "2001:0db8:0000:0000:0000:0000:0000:0001:",
    ]
    texts = [
        rng.choice(pool)
        if rng.random() < 0.3
        else str(
            ipaddress.IPv4Address(rng.getrandbits(32))
            if rng.random() < 0.5
            else ipaddress.IPv6Address(rng.getrandbits(128))
        )
        for _ in range(count)
    ]
    labels = kernel.find_many(texts)
    assert labels.tolist() == [kernel.find(text) for text in texts]
    reference = bantable.ReferencePrefixTable(*bantable.reference_parse_networks(values)[:2])
    assert kernel.find_many(pool).tolist() == [reference.find(text) for text in pool]
    covered, refused = kernel.contains_many(texts)
    assert covered.dtype == np.bool_
    assert covered.tolist() == (labels >= 0).tolist()
    assert refused == int(np.count_nonzero(labels == bantable.NOT_PARSED))
    valid = [text for text in texts if isinstance(text, str) and ok_text(text)]
    assert table.contains_many(valid).tolist() == [table.contains(text) for text in valid]


def _hex_group(rng: random.Random, width: int) -> str:
    """Return a group of ``width`` hex digits in mixed case, its first digit not zero."""
    digits = [rng.choice("123456789abcdefABCDEF")]
    digits += [rng.choice("0123456789abcdefABCDEF") for _ in range(width - 1)]
    return "".join(digits)


def test_ipv6_groups_of_every_width_answer_in_batch_as_per_call(batch_parsers: str) -> None:
    # With SSSE3 the batch reads the eight groups of an IPv6 text two at a time, one byte
    # shuffle for each pair of widths (1 to 4 digits each): every pair of widths at every
    # pair position, in mixed case, must give the key ipaddress gives, and near misses of
    # the same shapes must be refused exactly as per call.
    rng = random.Random(SEED + 19)
    texts = []
    for first in range(1, 5):
        for second in range(1, 5):
            for pair in range(4):
                for _ in range(3):
                    widths = [rng.randint(1, 4) for _ in range(8)]
                    widths[2 * pair], widths[2 * pair + 1] = first, second
                    texts.append(":".join(_hex_group(rng, width) for width in widths))
    misses = []
    for text in texts[::7]:
        groups = text.split(":")
        position = rng.randrange(8)
        for bad in ("12345", "g", "1\x00", "", "1 "):
            misses.append(":".join([*groups[:position], bad, *groups[position + 1 :]]))
        misses += [text + ":1", ":".join(groups[:7]), ":" + text, text + ":"]
    keys, ok = bantable.reference_parse_addresses(texts)
    assert ok.all()
    entries = [str(ipaddress.IPv6Address((int(hi) << 64) | int(lo))) for hi, lo in keys[::2]]
    entries += random_table(rng, 700)[0]  # over 512 intervals: the bucket index is in use
    table = BanTable(entries)
    kernel = table._table
    batch = texts + misses + ["1.2.3.4", "::ffff:1.2.3.4"]
    rng.shuffle(batch)
    labels = kernel.find_many(batch)
    assert labels.tolist() == [kernel.find(text) for text in batch]
    assert table.contains_many(texts).tolist() == [table.contains(text) for text in texts]
    assert all(labels[batch.index(text)] >= 0 for text in texts[::2])
    refused = [text for text in misses if not ok_text(text)]  # an empty group is a "::"
    assert len(refused) > len(misses) // 2
    assert all(labels[batch.index(text)] == bantable.NOT_PARSED for text in refused)


@pytest.mark.parametrize("entry_count", [3, 6000], ids=["small", "indexed"])
def test_batch_answers_exactly_like_the_per_call_loop(entry_count: int) -> None:
    # contains_many and indexes parse and search in one compiled pass, a group of keys at a
    # time; every answer must equal the per-call loop's, across group boundaries, for mapped
    # IPv6, for text only ipaddress takes, and for each kind of refusal.
    rng = random.Random(SEED + entry_count)
    values = ["10.0.0.0/8", "::ffff:192.0.2.0/120", "2001:db8::/32"]
    while len(values) < entry_count:
        if rng.random() < 0.6:
            address: Address = ipaddress.IPv4Address(rng.getrandbits(32))
            values.append(str(_masked(address, rng.choice([12, 16, 24, 32]))))
        else:
            address = ipaddress.IPv6Address((1 << 125) | rng.getrandbits(125))
            values.append(str(_masked(address, rng.choice([32, 48, 64, 128]))))
    table = BanTable(values)
    seeds = [ipaddress.ip_network(value).network_address for value in values[:200]]
    queries: list[object] = list(random_queries(rng, values, seeds, 997))  # not a multiple of 32
    queries[5:5] = ["::ffff:10.1.2.3", "::FFFF:192.0.2.9", "0:0:0:0:0:ffff:a01:203", "10.1.2.3"]
    queries[40:40] = [Text("10.9.9.9"), ipaddress.ip_address("2001:db8::7"), "::ffff:1.2.3.4"]
    queries[70:70] = ["0.0.0.0", "::", "255.255.255.255", "1:2:3:4:5:6:1.2.3.4"]
    expected = [table.index_of(query) for query in queries]  # type: ignore[arg-type]
    assert table.indexes(queries).tolist() == expected  # type: ignore[arg-type]
    assert table.contains_many(queries).tolist() == [
        table.contains(query)  # type: ignore[arg-type]
        for query in queries
    ]
    assert table.contains_many(iter(queries)).tolist() == [index >= 0 for index in expected]
    assert table.contains_many([]).tolist() == []
    # Invalid text: the per-call path raises, and so does the batch, naming the position.
    invalid = ["010.1.2.3", "192.0.2.9\x00", "١٠.1.2.3", "::ffff:10.1.2.3/128", "1.2.3", ""]
    for bad in invalid:
        with pytest.raises(ValueError):
            table.contains(bad)
        with pytest.raises(ValueError, match=r"addresses\[33\]"):
            table.contains_many([*queries[:33], bad, *queries[33:]])  # type: ignore[list-item]
    # The kernel's own batch call: -2 exactly where its per-call find refuses.
    kernel = table._table
    texts: list[object] = [*queries, *invalid, 7, None, b"10.1.2.3"]
    assert kernel.find_many(texts).tolist() == [kernel.find(text) for text in texts]


@settings(max_examples=150, deadline=None, database=None)
@given(
    entries=st.lists(
        st.tuples(st.ip_addresses(), st.integers(min_value=0, max_value=128)), max_size=12
    ),
    queries=st.lists(st.ip_addresses(), min_size=1, max_size=20),
)
def test_native_and_reference_match_the_oracle(
    entries: list[tuple[Address, int]], queries: list[Address]
) -> None:
    values = [
        str(_masked(address, min(length, address.max_prefixlen))) for address, length in entries
    ]
    # Query inside the entries too, so that matches are not left to chance.
    queries = queries + [ipaddress.ip_network(value).network_address for value in values]
    texts = [str(query) for query in queries]
    expected = [Oracle(values).index(text) for text in texts]
    native = native_cidr.PrefixTable(*native_cidr.parse_networks(values)[:2])
    reference = bantable.ReferencePrefixTable(*bantable.reference_parse_networks(values)[:2])
    assert [native.find(text) for text in texts] == expected
    assert [reference.find(text) for text in texts] == expected
    assert BanTable(values).indexes(queries).tolist() == expected
    assert len(native) <= 2 * (len(values) + 1) + 1


# --- decisions -------------------------------------------------------------------------------


def test_ipv4_mapped_ipv6_is_the_ipv4_address() -> None:
    table = BanTable(["10.0.0.0/8", "::ffff:192.0.2.0/120", "2001:db8::/32"])
    assert table.lookup("::ffff:10.1.2.3") == "10.0.0.0/8"
    assert table.lookup("::FFFF:a01:203") == "10.0.0.0/8"
    assert table.lookup("192.0.2.77") == "::ffff:192.0.2.0/120"
    assert table.contains(ipaddress.IPv6Address("::ffff:192.0.2.1"))
    assert bantable.normalise("::ffff:192.0.2.0/120") == "192.0.2.0/24"
    assert bantable.normalise("::ffff:192.0.2.7") == "192.0.2.7"
    # IPv4-compatible and NAT64 forms are plain IPv6.
    assert not table.contains("::10.1.2.3")
    assert not table.contains("64:ff9b::10.1.2.3")


def test_ipv6_ranges_never_cover_ipv4_and_ipv4_any_covers_only_ipv4() -> None:
    everything_v6 = BanTable(["::/0", "::/1", "::fffe:0:0/95"])
    assert everything_v6.contains("2001:db8::1") and everything_v6.contains("::1")
    assert not everything_v6.contains("192.0.2.1")
    assert not everything_v6.contains("::ffff:192.0.2.1")
    assert everything_v6.contains("::fffe:0:1")  # next to the IPv4 block, still IPv6
    every_v4 = BanTable(["0.0.0.0/0"])
    assert every_v4.contains("255.255.255.255") and every_v4.contains("0.0.0.0")
    assert not every_v4.contains("::") and not every_v4.contains("::fffe:ffff:ffff")
    both = BanTable(["::/0", "0.0.0.0/0", "::ffff:0:0/96"])
    assert both.lookup("203.0.113.9") == "0.0.0.0/0"  # first of the two equal ranges
    assert both.lookup("2001:db8::9") == "::/0"


def test_longest_match_wins_and_duplicates_keep_the_first() -> None:
    @dataclass(frozen=True)
    class Row:
        id: int
        value: str

    rows = [Row(1, "10.0.0.0/8"), Row(2, "10.1.0.0/16"), Row(3, "10.1.2.3"), Row(4, "10.1.0.0/16")]
    table = BanTable(rows)
    assert table.lookup("10.1.2.3") is rows[2]
    assert table.lookup("10.1.2.4") is rows[1]
    assert table.lookup("10.2.0.0") is rows[0]
    assert table.lookup("11.0.0.0") is None
    assert len(table) == 4 and table.entries == tuple(rows)


def test_top_of_the_key_space_and_empty_tables() -> None:
    top = BanTable(["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff::/16"])
    assert (
        top.lookup("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")
        == "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
    )
    assert top.lookup("ffff::1") == "ffff::/16"
    empty: BanTable[str] = BanTable([])
    assert not empty.contains("192.0.2.1") and empty.lookup("::1") is None
    assert empty.contains_many([]).shape == (0,)


def test_bad_input_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"entries\[1\]: '10.1.2.3/8'.*host bits set"):
        BanTable(["192.0.2.0/24", "10.1.2.3/8"])
    with pytest.raises(ValueError, match="scoped"):
        BanTable(["fe80::1%eth0"])
    with pytest.raises(ValueError, match="value string"):
        BanTable([object()])
    table = BanTable(["192.0.2.0/24"])
    with pytest.raises(ValueError, match="not an IPv4/IPv6 address"):
        table.contains("192.0.2.0/24")
    with pytest.raises(ValueError, match=r"addresses\[2\]"):
        table.contains_many(["192.0.2.1", "::1", "nope"])
    with pytest.raises(ValueError, match="scoped"):
        table.contains("fe80::1%eth0")
    with pytest.raises(ValueError):
        table.contains(3232235521)  # type: ignore[arg-type]


def test_accepts_what_ipaddress_accepts_beyond_the_fast_parser() -> None:
    # Netmask notation and a zero-padded length are refused by the kernel's fast path and
    # decided by ipaddress, which accepts them.
    table = BanTable(["10.0.0.0/255.0.0.0", "192.0.2.0/024", ipaddress.ip_network("2001:db8::/32")])
    assert table.lookup("10.9.9.9") == "10.0.0.0/255.0.0.0"
    assert table.contains("192.0.2.200") and table.contains(ipaddress.ip_address("2001:db8::5"))
    assert table.contains_many([ipaddress.ip_address("10.0.0.1"), "::1"]).tolist() == [True, False]


TRICKY = [
    "1.2.3.4",
    "01.2.3.4",
    "1.2.3",
    "1.2.3.4.5",
    "256.1.1.1",
    "0.0.0.0",
    "255.255.255.255",
    "::",
    "::1",
    "::ffff:1.2.3.4",
    "::FFFF:1.2.3.4",
    "::ffff:01.2.3.4",
    "1::2::3",
    "fe80::1%eth0",
    " 1.2.3.4",
    "1.2.3.4 ",
    "",
    "1:2:3:4:5:6:7:8",
    "1:2:3:4:5:6:1.2.3.4",
    "12345::1",
    "1:2:3:4:5:6:7:8:9",
    "::ffff:1.2.3.256",
    "1.2.3.4\x00",
    "١.٢.٣.٤",
    "a" * 60,
    "::/0",
    "1.2.3.4/32",
    "1.2.3.0/24",
    "1.2.3.0/024",
    "1.2.3.0/+24",
    "1.2.3.0/ 24",
    "1.2.3.4/33",
    "10.0.0.0/255.0.0.0",
    "2001:db8::/32",
    "2001:db8::1/32",
    "::ffff:10.0.0.0/104",
    "::ffff:0:0/96",
    "::ffff:0:0/95",
    "0.0.0.0/0",
    "1.2.3.4/",
    "/8",
    "::/129",
    "::/1000",
    "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255/128",
    "1:2:3:4:5:6:7::",
    "::1:2:3:4:5:6:7",
    "1:2:3:4:5:6:7:8::",
    "1::2:3:4:5:6:7:8",
    ":1::",
    "1:",
    "1::.",
    "::1.2.3",
    "0000:0000::00001",
    "fffff::",
    "::ffff:1.2.3.04",
    "1.2.3.4::",
    "1:2:3:4:5:6:7:1.2.3.4",
    "1:2:3:4:5:6:1.2.3.4:5",
    "::1.2.3.4.5",
    "[::1]",
    "::1/128 ",
    "1::2::",
    "::g",
    "0:0:0:0:0:0:0:0",
    "00:000:0000:0::",
    "ABCD:EF01::",
    "::0.0.0.0",
]


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.text(alphabet="0123456789abcdefABCDEF:./% f", max_size=45), max_size=20))
def test_fast_parser_accepts_nothing_ipaddress_refuses(texts: list[str]) -> None:
    texts = texts + TRICKY
    keys, lengths, ok = native_cidr.parse_networks(texts)
    ref_keys, ref_lengths, ref_ok = bantable.reference_parse_networks(texts)
    accepted = ok == 1
    assert not (accepted & (ref_ok == 0)).any(), [
        t for t, a, r in zip(texts, ok, ref_ok, strict=True) if a and not r
    ]
    assert np.array_equal(keys[accepted], ref_keys[accepted])
    assert np.array_equal(lengths[accepted], ref_lengths[accepted])
    addr_keys, addr_ok = native_cidr.parse_addresses(texts)
    ref_addr_keys, ref_addr_ok = bantable.reference_parse_addresses(texts)
    accepted = addr_ok == 1
    assert not (accepted & (ref_addr_ok == 0)).any()
    assert np.array_equal(addr_keys[accepted], ref_addr_keys[accepted])


@settings(max_examples=300, deadline=None, database=None)
@given(address=st.ip_addresses(), length=st.integers(min_value=0, max_value=128))
def test_fast_parser_takes_every_usual_spelling(address: Address, length: int) -> None:
    forms = [str(address)]
    if address.version == 6:
        forms += [address.exploded, address.exploded.upper(), str(address).upper()]
        mapped = address.ipv4_mapped
        forms += [f"::ffff:{mapped}"] if mapped is not None else []
        low = int(address) & 0xFFFFFFFF
        forms.append(f"{address.exploded[:30]}{ipaddress.IPv4Address(low)}")
    keys, ok = native_cidr.parse_addresses(forms)
    ref_keys, ref_ok = bantable.reference_parse_addresses(forms)
    assert ok.tolist() == [1] * len(forms) == ref_ok.tolist(), forms
    assert np.array_equal(keys, ref_keys)
    network = str(_masked(address, min(length, address.max_prefixlen)))
    net_keys, net_lengths, net_ok = native_cidr.parse_networks([network])
    ref_net = bantable.reference_parse_networks([network])
    assert net_ok[0] == 1 and np.array_equal(net_keys, ref_net[0])
    assert np.array_equal(net_lengths, ref_net[1])


def test_fast_parser_takes_the_common_forms() -> None:
    common = ["192.0.2.7", "10.0.0.0/8", "2001:db8::/32", "::1", "::ffff:192.0.2.7", "::/0"]
    assert native_cidr.parse_networks(common)[2].tolist() == [1] * len(common)


# --- the batch path against the per-call path on random mixes -----------------------------

MIX_ALPHABET = "0123456789abcdefABCDEF:.% \x00g/"


@st.composite
def address_texts(draw: st.DrawFn) -> str:
    """One query text: an address in one of its spellings, often mangled into garbage."""
    address = draw(st.ip_addresses())
    forms = [str(address)]
    if address.version == 6:
        forms += [address.exploded, str(address).upper()]
    else:
        forms += [f"::ffff:{address}", f"::FFFF:{int(address) >> 16:x}:{int(address) & 0xFFFF:x}"]
    text = draw(st.sampled_from(forms))
    kind = draw(st.sampled_from(["plain", "plain", "zone", "space", "mangle"]))
    if kind == "zone":
        return text + "%eth0"
    if kind == "space":
        return draw(st.sampled_from([" ", "\t", ""])) + text + draw(st.sampled_from([" ", "\n"]))
    if kind == "mangle":
        chars = list(text)
        for _ in range(draw(st.integers(min_value=1, max_value=3))):
            position = draw(st.integers(min_value=0, max_value=len(chars)))
            change = draw(st.sampled_from(["insert", "delete", "replace"]))
            if change == "insert" or not chars:
                chars.insert(position, draw(st.sampled_from(MIX_ALPHABET)))
            elif change == "delete":
                del chars[min(position, len(chars) - 1)]
            else:
                chars[min(position, len(chars) - 1)] = draw(st.sampled_from(MIX_ALPHABET))
        return "".join(chars)
    return text


def _mixed_table() -> tuple[BanTable[str], bantable.ReferencePrefixTable]:
    rng = random.Random(SEED + 17)
    values, _ = random_table(rng, 700)  # over 512 intervals: the bucket index is in use
    values += ["0.0.0.0/1", "2000::/3", "::ffff:0:0/97", "::/8"]
    keys, lengths = bantable.reference_parse_networks(values)[:2]
    return BanTable(values), bantable.ReferencePrefixTable(keys, lengths)


MIXED_TABLE, MIXED_REFERENCE = _mixed_table()


def _per_call(table: BanTable[str], text: str) -> bool | None:
    try:
        return table.contains(text)
    except ValueError:
        return None


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(address_texts(), max_size=70))
def test_batch_equals_the_per_call_loop_on_random_mixes(texts: list[str]) -> None:
    # contains_many parses the whole list in one compiled pass (an SSE2 parser for the usual
    # spellings, the scalar one for the rest); it must answer exactly as contains() does one
    # address at a time: IPv4, IPv6, mapped IPv6, zones, whitespace and garbage alike.
    table, kernel = MIXED_TABLE, MIXED_TABLE._table
    labels = kernel.find_many(texts)
    assert labels.tolist() == [kernel.find(text) for text in texts]
    # The reference twin agrees wherever the kernel decided (it leaves -2 to ipaddress).
    decided = labels != bantable.NOT_PARSED
    reference = MIXED_REFERENCE.find_many(texts)
    assert np.array_equal(labels[decided], reference[decided])
    answers = [_per_call(table, text) for text in texts]
    valid = [text for text, answer in zip(texts, answers, strict=True) if answer is not None]
    expected = [answer for answer in answers if answer is not None]
    assert table.contains_many(valid).tolist() == expected
    if None in answers:
        first = answers.index(None)
        with pytest.raises(ValueError, match=rf"addresses\[{first}\]"):
            table.contains_many(texts)
    else:
        assert table.contains_many(texts).tolist() == answers


def test_batch_reads_strings_lying_anywhere_in_memory() -> None:
    # The SSE2 parser reads 48 bytes at a time where the text lies, or copies it first when
    # those bytes would cross a memory page. Thousands of fresh strings of every length land
    # at every offset, the page ends included; each must parse as ipaddress parses it.
    rng = random.Random(SEED + 18)
    texts = []
    for _ in range(6000):
        if rng.random() < 0.5:
            texts.append(str(ipaddress.IPv4Address(rng.getrandbits(32))))
        else:
            texts.append(str(ipaddress.IPv6Address(rng.getrandbits(128) >> rng.randrange(0, 128))))
    texts = [(text + " ")[:-1] for text in texts]  # new objects, allocated one after another
    keys, ok = native_cidr.parse_addresses(texts)
    ref_keys, ref_ok = bantable.reference_parse_addresses(texts)
    assert ok.tolist() == ref_ok.tolist() == [1] * len(texts)
    assert np.array_equal(keys, ref_keys)
    # The batch reads the same strings in place too: its family hint (eight bytes at once)
    # and the parsers it calls for each family. Short texts, garbage and near misses included.
    texts += [(text + " ")[:-1] for text in ["1", "::", "1::", ":", "1:", "1.2.3", "a", "1.2.3.4:"]]
    rng.shuffle(texts)
    table = BanTable(
        [f"{text}/{32 if '.' in text else 128}" for text in texts[:600] if ok_text(text)]
    )
    kernel = table._table
    assert kernel.find_many(texts).tolist() == [kernel.find(text) for text in texts]


def ok_text(text: str) -> bool:
    try:
        bantable.parse_address(text)
    except ValueError:
        return False
    return True


# --- the compiled module is the one in use ----------------------------------------------------


def test_wrapper_uses_compiled_module() -> None:
    assert bantable.HAS_NATIVE is True
    assert native_cidr.__file__ is not None and native_cidr.__file__.endswith(".so")
    assert bantable._table_impl is native_cidr.PrefixTable
    assert bantable._parse_networks_impl is native_cidr.parse_networks
    assert bantable._parse_addresses_impl is native_cidr.parse_addresses
    assert type(BanTable(["::1"])._table) is native_cidr.PrefixTable


def test_kernel_checks_its_own_input() -> None:
    with pytest.raises(ValueError, match="host bits"):
        native_cidr.PrefixTable(np.array([[0, 1]], dtype=np.uint64), np.array([64], dtype=np.uint8))
    with pytest.raises(ValueError, match="over 128"):
        native_cidr.PrefixTable(np.zeros((1, 2), dtype=np.uint64), np.array([129], dtype=np.uint8))
    with pytest.raises(ValueError, match="prefix lengths"):
        native_cidr.PrefixTable(np.zeros((2, 2), dtype=np.uint64), np.array([1], dtype=np.uint8))
    table = native_cidr.PrefixTable(np.zeros((0, 2), dtype=np.uint64), np.zeros(0, dtype=np.uint8))
    assert table.find(42) == native_cidr.NOT_PARSED and table.find("::1") == native_cidr.NO_MATCH


def _import_without_native(require: bool) -> subprocess.CompletedProcess[str]:
    """Import the wrapper where the compiled module cannot load."""
    code = (
        "from alertstation.security import bantable\n"
        "table = bantable.BanTable(['10.0.0.0/8', '::/0'])\n"
        "print(bantable.HAS_NATIVE, bantable._table_impl.__name__)\n"
        "print(table.contains('::ffff:10.1.1.1'), table.contains('192.0.2.1'))\n"
    )
    return run_without_kernel("cidr", code, require=require)


def test_fallback_is_the_reference_when_native_is_missing() -> None:
    result = _import_without_native(require=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "ReferencePrefixTable", "True", "False"]


def test_require_native_turns_a_missing_module_into_import_error() -> None:
    result = _import_without_native(require=True)
    assert result.returncode != 0
    assert "ImportError" in result.stderr and "ALERTSTATION_REQUIRE_NATIVE=1" in result.stderr
