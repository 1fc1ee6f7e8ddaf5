"""Time ``contains_many`` per address on the benchmark's own table and queries, by kind of text.

``python -m benchmarks.bantable_probe`` builds the 100,000-entry table and the 10,000 queries of
``bench_security_bantable.py`` (same seed) and prints, for the whole mix and for its IPv4 texts,
its IPv6 texts written out in full (39 characters) and its other IPv6 texts, the nanoseconds an
address costs in one ``contains_many`` call (the kernel's own call, the fastest of 300). It is
for comparing two versions of the parser on one machine; ``make bench`` gives the figures the
report prints.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from alertstation.security.bantable import BanTable
from benchmarks.bench_security_bantable import ENTRIES, QUERIES, SEED, make_entries, make_queries

ROUNDS = 300


def per_address(call: Callable[[list[str]], object], texts: list[str]) -> float:
    """Return the fastest round's nanoseconds per text."""
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        call(texts)
        best = min(best, time.perf_counter() - started)
    return best / len(texts) * 1e9


def main() -> None:
    rng = random.Random(SEED)
    entries = make_entries(rng, ENTRIES)
    queries = make_queries(rng, entries, QUERIES)
    kernel = BanTable(entries)._table
    kinds = {
        "mix": queries,
        "IPv4": [text for text in queries if ":" not in text],
        "IPv6, 39 characters": [text for text in queries if len(text) == 39],
        "IPv6, shorter": [text for text in queries if ":" in text and len(text) != 39],
    }
    for name, texts in kinds.items():
        cost = per_address(kernel.contains_many, texts)
        print(f"{name:22s} {len(texts):6d} texts  {cost:5.1f} ns an address")


if __name__ == "__main__":
    main()
