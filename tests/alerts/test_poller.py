"""The poller against a real HTTP server on loopback, on both backends.

The server serves the sample feeds with validators; the clock and the random source are
injected, so schedules and backoff delays are asserted exactly, never measured.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from alertstation.alerts.poll.fetch import USER_AGENT, HttpClient
from alertstation.alerts.poll.poller import (
    MAX_BACKOFF_SECONDS,
    Poller,
    backoff_delay,
    poll_job,
    poller_for,
    wait_for_poll_job,
)
from alertstation.alerts.poll.sources import create_source, get_source, read_config
from alertstation.alerts.poll.tables import poll_source_links
from alertstation.alerts.service import set_alert_settings
from alertstation.alerts.tables import cap_alerts
from alertstation.db.engine import begin_write
from alertstation.version import __version__
from tests.alerts.feed_server import Canned, FeedServer, running_server
from tests.support import Clock, StationHarness, clear_tables, make_settings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
FEED = (FIXTURES / "api_feed.json").read_bytes()
ETAG = '"feed-v1"'
MODIFIED = "Sat, 21 Nov 2026 11:59:00 GMT"
CAP_NS = "urn:oasis:names:tc:emergency:cap:1.2"


@pytest.fixture
def db(engine: Engine) -> Iterator[Engine]:
    """The test database with Tarrant County, TX as the broadcast area; emptied afterwards."""
    with begin_write(engine) as conn:
        set_alert_settings(conn, zone_codes=["TXC439", "048439"])
    yield engine
    clear_tables(engine)


@pytest.fixture
def server() -> Iterator[FeedServer]:
    with running_server() as feed_server:
        yield feed_server


@pytest.fixture
def http() -> Iterator[HttpClient]:
    client = HttpClient()
    yield client
    client.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


def poller(engine: Engine, clock: Clock, http: HttpClient, rng: float = 0.25) -> Poller:
    return Poller(engine, clock=clock, rng=lambda: rng, http=http, parallel=1)


def add_source(engine: Engine, clock: Clock, **body: Any) -> int:
    with begin_write(engine) as conn:
        return create_source(conn, read_config(body), clock())


def source(engine: Engine, source_id: int) -> Any:
    with engine.connect() as conn:
        return get_source(conn, source_id)


def stored_count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(cap_alerts)).scalar_one())


def cap_message(identifier: str, code: str = "048439", minute: int = 0) -> bytes:
    """Return a minimal CAP 1.2 message for county ``code`` sent at 12:``minute`` UTC."""
    sent = f"2026-11-21T12:{minute:02d}:00+00:00"
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<alert xmlns="{CAP_NS}">
  <identifier>{identifier}</identifier>
  <sender>test@example.org</sender>
  <sent>{sent}</sent>
  <status>Actual</status>
  <msgType>Alert</msgType>
  <scope>Public</scope>
  <info>
    <category>Met</category>
    <event>Severe Thunderstorm Warning</event>
    <urgency>Immediate</urgency>
    <severity>Severe</severity>
    <certainty>Observed</certainty>
    <eventCode><valueName>SAME</valueName><value>SVR</value></eventCode>
    <expires>2026-11-21T23:00:00+00:00</expires>
    <area>
      <areaDesc>Somewhere</areaDesc>
      <geocode><valueName>SAME</valueName><value>{code}</value></geocode>
    </area>
  </info>
</alert>
""".encode()


def atom_feed(base: str, links: list[str]) -> bytes:
    entries = "".join(
        f"<entry><id>{link}</id><updated>2026-11-21T12:00:00Z</updated><title>t</title>"
        f'<link rel="alternate" href="{link}"/></entry>'
        for link in links
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f"<id>{base}/feed</id><title>feed</title><updated>2026-11-21T12:00:00Z</updated>"
        f"{entries}</feed>"
    ).encode()


# --- the agency JSON API, conditional GET --------------------------------------------------


def test_json_api_poll_stores_matching_alerts_and_records_health(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    server.serve("/alerts/active?area=TX", Canned(FEED, etag=ETAG, last_modified=MODIFIED))
    source_id = add_source(db, clock, name="NWS Texas", kind="json-api", url=server.base, area="tx")
    [outcome] = poller(db, clock, http).poll_due()

    assert (outcome.ok, outcome.status) == (True, 200)
    # Six entries: three in Tarrant County, two elsewhere, one with an unreadable time.
    assert (outcome.stored, outcome.ignored, outcome.skipped) == (3, 2, 1)
    assert stored_count(db) == 3
    [request] = server.seen()
    assert request.headers["user-agent"] == USER_AGENT
    assert f"AlertStation/{__version__}" in USER_AGENT
    assert "application/geo+json" in request.headers["accept"]
    assert "if-none-match" not in request.headers
    row = source(db, source_id)
    assert (row.etag, row.last_modified) == (ETAG, MODIFIED)
    assert (row.last_status, row.consecutive_failures, row.last_error) == (200, 0, None)
    assert row.last_success_at == row.last_attempt_at == clock()
    assert row.next_attempt_at == clock() + timedelta(seconds=60)
    assert (row.last_received, row.last_stored, row.last_skipped) == (6, 3, 1)


def test_second_poll_is_conditional_and_304_stores_nothing(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    server.serve("/alerts/active?zone=TXC439", Canned(FEED, etag=ETAG, last_modified=MODIFIED))
    source_id = add_source(
        db, clock, name="Tarrant", kind="json-api", url=server.base, zones=["TXC439"]
    )
    the_poller = poller(db, clock, http)
    the_poller.poll_due()
    before = stored_count(db)

    assert the_poller.poll_due() == []  # not due again before its interval
    clock.advance(seconds=60)
    [outcome] = the_poller.poll_due()

    first, second = server.seen()
    assert "if-none-match" not in first.headers
    assert second.headers["if-none-match"] == ETAG
    assert second.headers["if-modified-since"] == MODIFIED
    assert (outcome.ok, outcome.status, outcome.not_modified, outcome.stored) == (
        True,
        304,
        True,
        0,
    )
    assert stored_count(db) == before
    row = source(db, source_id)
    assert (row.etag, row.last_modified, row.last_status, row.last_stored) == (
        ETAG,
        MODIFIED,
        304,
        0,
    )
    assert row.next_attempt_at == clock() + timedelta(seconds=60)


def test_a_changed_feed_is_fetched_in_full_and_duplicates_are_not_stored_twice(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    path = "/alerts/active?area=TX"
    server.serve(path, Canned(FEED, etag='"v1"'), Canned(FEED, etag='"v2"'))
    source_id = add_source(db, clock, name="TX", kind="json-api", url=server.base, area="TX")
    the_poller = poller(db, clock, http)
    the_poller.poll_all()
    [outcome] = the_poller.poll_all()  # poll_all ignores the schedule

    assert (outcome.status, outcome.stored, outcome.duplicates) == (200, 0, 3)
    assert stored_count(db) == 3
    assert source(db, source_id).etag == '"v2"'


# --- failures and backoff -----------------------------------------------------------------


def test_backoff_delay_is_full_jitter_below_a_doubling_capped_ceiling() -> None:
    assert backoff_delay(1, 60, lambda: 0.5) == 60.0  # ceiling 120
    assert backoff_delay(2, 60, lambda: 0.5) == 120.0  # ceiling 240
    assert backoff_delay(3, 60, lambda: 0.999) == pytest.approx(479.52)
    assert backoff_delay(40, 60, lambda: 0.5) == MAX_BACKOFF_SECONDS / 2  # capped
    assert backoff_delay(1, 60, lambda: 0.0) == 5.0  # never sooner than the floor
    assert backoff_delay(1, 60, lambda: 0.1, retry_after=300) == 300.0
    assert backoff_delay(1, 60, lambda: 0.1, retry_after=10**6) == MAX_BACKOFF_SECONDS


def test_failures_back_off_and_a_success_resets(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    path = "/alerts/active?area=TX"
    server.serve(
        path,
        Canned(b"boom", status=500, content_type="text/plain"),
        Canned(b"boom", status=500, content_type="text/plain"),
        Canned(FEED, etag=ETAG),
    )
    source_id = add_source(db, clock, name="TX", kind="json-api", url=server.base, area="TX")
    the_poller = poller(db, clock, http, rng=0.25)

    [first] = the_poller.poll_due()
    assert (first.ok, first.status, first.error) == (False, 500, "HTTP 500 Internal Server Error")
    row = source(db, source_id)
    assert row.consecutive_failures == 1
    assert row.next_attempt_at == clock() + timedelta(seconds=30)  # 0.25 × 120
    assert row.last_success_at is None and row.last_error == "HTTP 500 Internal Server Error"

    clock.advance(seconds=29)
    assert the_poller.poll_due() == []
    clock.advance(seconds=1)
    [second] = the_poller.poll_due()
    assert not second.ok
    row = source(db, source_id)
    assert row.consecutive_failures == 2
    assert row.next_attempt_at == clock() + timedelta(seconds=60)  # 0.25 × 240

    clock.advance(seconds=60)
    [third] = the_poller.poll_due()
    assert (third.ok, third.stored) == (True, 3)
    row = source(db, source_id)
    assert (row.consecutive_failures, row.last_error, row.last_status) == (0, None, 200)
    assert row.next_attempt_at == clock() + timedelta(seconds=60)
    assert len(server.seen()) == 3


def test_retry_after_of_a_503_is_respected(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    server.serve(
        "/feed.xml",
        Canned(b"busy", status=503, content_type="text/plain", headers={"Retry-After": "600"}),
    )
    source_id = add_source(db, clock, name="busy", kind="cap-xml", url=server.url("/feed.xml"))
    [outcome] = poller(db, clock, http, rng=0.1).poll_due()
    assert (outcome.ok, outcome.status) == (False, 503)
    assert source(db, source_id).next_attempt_at == clock() + timedelta(seconds=600)


def test_a_timeout_is_recorded_as_a_failure(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    server.serve("/slow.xml", Canned(cap_message("slow-1"), delay=1.0))
    source_id = add_source(
        db,
        clock,
        name="slow",
        kind="cap-xml",
        url=server.url("/slow.xml"),
        connect_timeout=1,
        read_timeout=0.2,
    )
    [outcome] = poller(db, clock, http).poll_due()
    assert not outcome.ok and outcome.status is None
    assert outcome.error == "no data for 0.2 s (read timeout)"
    row = source(db, source_id)
    assert (row.consecutive_failures, row.last_status) == (1, None)
    assert row.last_error == "no data for 0.2 s (read timeout)"
    assert stored_count(db) == 0


def test_an_unreachable_host_is_a_failure_naming_the_cause(
    db: Engine, http: HttpClient, clock: Clock
) -> None:
    with running_server() as gone:
        url = gone.url("/feed.xml")
    add_source(db, clock, name="gone", kind="cap-xml", url=url)
    [outcome] = poller(db, clock, http).poll_due()
    assert not outcome.ok and outcome.error is not None
    assert outcome.error.startswith(("cannot connect", "connection timed out"))
    assert "feed.xml" not in outcome.error  # reasons never carry the URL


def test_an_unreadable_body_fails_and_keeps_no_validators(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    server.serve(
        "/feed.xml",
        Canned(b"<alert><unclosed></alert>", content_type="application/xml", etag='"bad"'),
    )
    source_id = add_source(db, clock, name="broken", kind="cap-xml", url=server.url("/feed.xml"))
    the_poller = poller(db, clock, http)
    [outcome] = the_poller.poll_due()
    assert not outcome.ok and outcome.status == 200
    assert outcome.error is not None and outcome.error.startswith(
        "unreadable answer: malformed XML"
    )
    assert source(db, source_id).etag is None
    clock.advance(seconds=3600)
    the_poller.poll_due()
    assert "if-none-match" not in server.seen()[-1].headers  # fetched in full again


def test_a_malformed_message_in_a_batch_is_skipped_and_the_rest_stored(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    feed = json.loads(FEED)
    feed["features"] = feed["features"][:3]
    feed["features"][1]["properties"]["sent"] = "not a time"
    server.serve("/alerts/active?area=TX", Canned(json.dumps(feed).encode()))
    add_source(db, clock, name="TX", kind="json-api", url=server.base, area="TX")
    [outcome] = poller(db, clock, http).poll_due()
    assert outcome.ok
    assert (outcome.stored, outcome.skipped) == (2, 1)
    assert "not a time" in outcome.problems[0]
    assert stored_count(db) == 2


def test_the_size_limit_refuses_a_large_answer_announced_or_not(
    server: FeedServer, http: HttpClient
) -> None:
    from alertstation.alerts.poll.fetch import FetchError, Limits

    body = b"x" * 5000
    server.serve("/big", Canned(body))
    server.serve("/big-chunked", Canned(body, send_length=False))
    limits = Limits(connect_timeout=2, read_timeout=2, max_bytes=1000)
    with pytest.raises(FetchError, match="server announced 5000 bytes"):
        http.fetch(server.url("/big"), limits)
    with pytest.raises(FetchError, match="larger than the limit of 1000 bytes"):
        http.fetch(server.url("/big-chunked"), limits)
    assert http.fetch(server.url("/big"), Limits(max_bytes=5000)).body == body


# --- CAP XML, ATOM and IPAWS ----------------------------------------------------------------


def test_atom_entries_that_embed_alerts_are_imported(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    with begin_write(db) as conn:
        set_alert_settings(conn, zone_codes=["OKC109"])
    atom = (FIXTURES / "atom_feed.xml").read_bytes()
    server.serve("/ok.atom", Canned(atom, content_type="application/atom+xml"))
    add_source(db, clock, name="OK", kind="cap-xml", url=server.url("/ok.atom"))
    [outcome] = poller(db, clock, http).poll_due()
    # One embedded alert stored, one invalid embedded alert skipped; the linked entry points at
    # another host, which the poller refuses to fetch.
    assert outcome.ok and outcome.stored == 1
    assert outcome.skipped == 2
    assert any("not on the feed's host" in problem for problem in outcome.problems)
    assert [r.path for r in server.seen()] == ["/ok.atom"]


def test_atom_links_are_fetched_once_on_the_feed_host_only(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    links = [server.url("/cap/1.xml"), "/cap/2.xml", "http://192.0.2.7/cap/3.xml"]
    server.serve(
        "/feed.atom",
        Canned(atom_feed(server.base, links), content_type="application/atom+xml", etag='"a"'),
        Canned(
            atom_feed(server.base, links + ["/cap/4.xml"]),
            content_type="application/atom+xml",
            etag='"b"',
        ),
    )
    for number in (1, 2, 4):
        server.serve(f"/cap/{number}.xml", Canned(cap_message(f"linked-{number}", minute=number)))
    source_id = add_source(db, clock, name="atom", kind="cap-xml", url=server.url("/feed.atom"))
    the_poller = poller(db, clock, http)

    [first] = the_poller.poll_all()
    assert first.ok and (first.linked, first.stored, first.skipped) == (2, 2, 1)
    assert sorted(r.path for r in server.seen() if r.path.startswith("/cap/")) == [
        "/cap/1.xml",
        "/cap/2.xml",
    ]
    [second] = the_poller.poll_all()
    assert second.ok and (second.linked, second.stored) == (1, 1)
    assert [r.path for r in server.seen()][-2:] == ["/feed.atom", "/cap/4.xml"]
    assert stored_count(db) == 3
    with db.connect() as conn:
        remembered = conn.execute(
            select(func.count())
            .select_from(poll_source_links)
            .where(poll_source_links.c.source_id == source_id)
        ).scalar_one()
    assert remembered == 4  # three fetched, one refused (off host), all still in the feed


def test_a_linked_document_that_fails_is_retried_with_the_feed(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    server.serve(
        "/feed.atom",
        Canned(
            atom_feed(server.base, ["/cap/1.xml"]), content_type="application/atom+xml", etag='"a"'
        ),
    )
    server.serve(
        "/cap/1.xml",
        Canned(b"oops", status=500, content_type="text/plain"),
        Canned(cap_message("linked-1")),
    )
    source_id = add_source(db, clock, name="atom", kind="cap-xml", url=server.url("/feed.atom"))
    the_poller = poller(db, clock, http)
    [first] = the_poller.poll_all()
    assert first.ok and first.stored == 0
    assert (
        first.note == "1 linked document(s) not fetched this time: HTTP 500 Internal Server Error"
    )
    row = source(db, source_id)
    assert row.etag is None and row.last_error == first.note  # shown as degraded
    [second] = the_poller.poll_all()
    assert "if-none-match" not in server.seen("/feed.atom")[-1].headers
    assert second.ok and second.stored == 1 and second.note is None
    assert source(db, source_id).etag == '"a"'


def test_a_redirect_of_a_linked_document_is_refused(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    server.serve(
        "/feed.atom",
        Canned(atom_feed(server.base, ["/cap/1.xml"]), content_type="application/atom+xml"),
    )
    server.serve(
        "/cap/1.xml",
        Canned(status=302, content_type="text/plain", headers={"Location": "http://192.0.2.7/x"}),
    )
    add_source(db, clock, name="atom", kind="cap-xml", url=server.url("/feed.atom"))
    [outcome] = poller(db, clock, http).poll_all()
    assert outcome.note is not None and "redirect refused" in outcome.note
    assert stored_count(db) == 0


def test_ipaws_since_placeholder_follows_the_last_success(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    with begin_write(db) as conn:
        set_alert_settings(conn, zone_codes=["025025"])
    ipaws = (FIXTURES / "ipaws_feed.xml").read_bytes()
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    first_path = "/recent/" + (clock.now - timedelta(hours=1)).strftime(stamp)  # the lookback
    server.serve(first_path, Canned(ipaws, content_type="application/xml"))
    later_path = "/recent/" + (clock.now - timedelta(minutes=1)).strftime(stamp)  # the overlap
    server.serve(later_path, Canned(ipaws, content_type="application/xml"))
    add_source(db, clock, name="IPAWS", kind="ipaws", url=server.url("/recent/{since}"))
    the_poller = poller(db, clock, http)
    [first] = the_poller.poll_due()
    assert first.ok and (first.stored, first.skipped) == (5, 1)
    clock.advance(seconds=60)
    [second] = the_poller.poll_due()
    assert second.ok and second.duplicates == 5
    assert [r.path for r in server.seen()] == [first_path, later_path]


def test_credentials_in_the_url_are_sent_as_basic_auth(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    server.serve("/feed.xml", Canned(cap_message("auth-1"), content_type="application/xml"))
    url = server.url("/feed.xml").replace("http://", "http://feeder:s%40cret@")
    add_source(db, clock, name="private", kind="cap-xml", url=url)
    [outcome] = poller(db, clock, http).poll_due()
    assert outcome.ok
    expected = "Basic " + base64.b64encode(b"feeder:s@cret").decode()
    assert server.seen()[0].headers["authorization"] == expected


# --- which sources are polled ---------------------------------------------------------------


def test_only_due_enabled_sources_are_polled_each_on_its_own_interval(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    for name in ("fast", "slow", "off"):
        server.serve(f"/{name}.xml", Canned(cap_message(f"{name}-1"), content_type="text/xml"))
    add_source(db, clock, name="fast", kind="cap-xml", url=server.url("/fast.xml"))
    add_source(
        db, clock, name="slow", kind="cap-xml", url=server.url("/slow.xml"), interval_seconds=300
    )
    add_source(db, clock, name="off", kind="cap-xml", url=server.url("/off.xml"), enabled=False)
    the_poller = poller(db, clock, http)
    assert sorted(o.name for o in the_poller.poll_due()) == ["fast", "slow"]
    clock.advance(seconds=60)
    assert [o.name for o in the_poller.poll_due()] == ["fast"]
    clock.advance(seconds=240)
    assert sorted(o.name for o in the_poller.poll_due()) == ["fast", "slow"]
    assert not server.seen("/off.xml")


def test_poll_job_polls_the_due_sources_of_the_station(
    station: StationHarness, server: FeedServer
) -> None:
    server.serve("/in.xml", Canned(cap_message("job-in"), content_type="text/xml"))
    server.serve("/out.xml", Canned(cap_message("job-out", code="051099"), content_type="text/xml"))
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["048439"])
    for name in ("in", "out"):
        url = server.url(f"/{name}.xml")
        add_source(station.engine, station.clock, name=name, kind="cap-xml", url=url)
    poll_job(station.app.station)
    wait_for_poll_job(10)
    poll_job(station.app.station)  # not due again yet
    wait_for_poll_job(10)
    assert len(server.seen()) == 2
    with station.engine.connect() as conn:
        stored = conn.execute(select(cap_alerts.c.identifier)).scalars().all()
    assert stored == ["job-in"]  # matching decides: the out-of-area alert is not kept


def test_poll_job_runs_in_the_background_one_round_at_a_time(
    station: StationHarness, server: FeedServer
) -> None:
    server.serve("/slow.xml", Canned(cap_message("slow-1"), content_type="text/xml", delay=0.5))
    add_source(
        station.engine, station.clock, name="slow", kind="cap-xml", url=server.url("/slow.xml")
    )
    poll_job(station.app.station)  # returns at once; the round holds the job until it ends
    station.clock.advance(seconds=600)
    poll_job(station.app.station)  # the source is due again, but the first round still runs
    wait_for_poll_job(10)
    assert len(server.seen()) == 1


@pytest.mark.parametrize("contact", ["", "ops@station.example"])
def test_the_station_poller_names_its_contact_in_user_agent(
    db: Engine, server: FeedServer, clock: Clock, tmp_path: Path, contact: str
) -> None:
    server.serve("/feed.json", Canned(FEED, content_type="application/geo+json"))
    add_source(db, clock, name="api", kind="cap-xml", url=server.url("/feed.json"))
    settings = make_settings(tmp_path, "sqlite://", contact=contact)
    poller_for(db, settings, clock=clock).poll_all()
    agent = server.seen("/feed.json")[0].headers["user-agent"]
    assert agent.startswith(f"AlertStation/{__version__} (CAP alert poller")
    assert agent.endswith(f"; {contact})" if contact else "poller)")


def test_a_source_that_delivers_a_weekly_or_monthly_test_records_when(
    db: Engine, server: FeedServer, http: HttpClient, clock: Clock
) -> None:
    rwt = cap_message("rwt-1").replace(b"<value>SVR</value>", b"<value>RWT</value>")
    server.serve("/rwt.xml", Canned(rwt, content_type="application/xml"))
    server.serve("/again.xml", Canned(rwt, content_type="application/xml"))
    server.serve("/svr.xml", Canned(cap_message("svr-1"), content_type="application/xml"))
    tests = add_source(db, clock, name="state relay", kind="cap-xml", url=server.url("/rwt.xml"))
    warnings = add_source(db, clock, name="warnings", kind="cap-xml", url=server.url("/svr.xml"))
    poller(db, clock, http).poll_due()
    assert (source(db, tests).last_rwt_at, source(db, tests).last_rmt_at) == (clock(), None)
    assert source(db, warnings).last_rwt_at is None
    # The same test delivered by a second feed (a duplicate in the store) counts for it too.
    clock.advance(minutes=5)
    again = add_source(db, clock, name="second", kind="cap-xml", url=server.url("/again.xml"))
    poller(db, clock, http).poll_due()
    assert source(db, again).last_rwt_at == clock()
