"""``alerts import`` of folders and archives: every message read once, nothing extracted."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from contextlib import ExitStack
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from alertstation.alerts.import_inputs import (
    InputError,
    TooLarge,
    collect,
    is_archive,
    is_message_name,
)
from alertstation.alerts.tables import cap_alerts
from alertstation.cli import main
from tests.alerts.test_alerts_cli import FIXTURES, station_env

__all__ = ["station_env"]  # the fixture, shared with the command's other tests

TEMPLATE = (FIXTURES / "cap12_svr_new.xml").read_text()
IDENTIFIER = TEMPLATE.split("<identifier>")[1].split("<")[0]


def message(number: int) -> bytes:
    """A distinct CAP message (its own identifier, no VTEC chain shared with the others)."""
    text = TEMPLATE.replace(IDENTIFIER, f"urn:example:archive:{number}", 1)
    assert text != TEMPLATE
    return text.encode()


def archive_tree(root: Path, count: int) -> list[str]:
    """Write ``count`` messages in nested folders, plus entries that are not messages.

    Return the identifiers in the order the import reads them (sorted by path).
    """
    for number in range(count):
        folder = root / f"day{number % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"msg{number:03d}.xml").write_bytes(message(number))
    (root / "README.txt").write_text("not a message")
    (root / ".hidden.xml").write_bytes(message(900))
    hidden = root / ".cache"
    hidden.mkdir()
    (hidden / "old.xml").write_bytes(message(901))
    os.symlink(root / "day0" / "msg000.xml", root / "link.xml")
    order = sorted((n % 3, n) for n in range(count))
    return [f"urn:example:archive:{n}" for _, n in order]


def stored_identifiers(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(select(cap_alerts.c.identifier)).scalars())


def test_names_read_inside_folders_and_archives() -> None:
    assert is_message_name("a/b/2026-11-24.xml") and is_message_name("feed.JSON")
    assert is_message_name("x.cap") and is_message_name("x.atom") and is_message_name("x.geojson")
    assert not is_message_name("a/.hidden.xml") and not is_message_name("notes.txt")
    assert is_archive(Path("a.zip")) and is_archive(Path("a.TAR.GZ")) and is_archive(Path("a.tgz"))
    assert not is_archive(Path("a.xml")) and not is_archive(Path("a.gz"))


def test_a_folder_is_walked_in_order_passing_over_hidden_entries_links_and_others(
    tmp_path: Path,
) -> None:
    expected = archive_tree(tmp_path / "archive", 6)
    with ExitStack() as stack:
        found = collect([tmp_path / "archive"], stack)
        bodies = [item.read() for item in found.items]
    assert [body.split(b"<identifier>")[1].split(b"<")[0].decode() for body in bodies] == expected
    # README.txt, .hidden.xml, link.xml; a hidden folder is not entered at all
    assert found.ignored == 3


def test_archives_list_their_message_members_and_read_them_unextracted(tmp_path: Path) -> None:
    zipped, tarred = tmp_path / "a.zip", tmp_path / "a.tar.gz"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("b/2.xml", message(2))
        archive.writestr("a/1.xml", message(1))
        archive.writestr("../escape.xml", message(3))  # a name is only a label here
        archive.writestr("notes.txt", "x")
    with tarfile.open(tarred, "w:gz") as archive:
        for name, body in (("1.xml", message(1)), ("2.xml", message(2))):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            archive.addfile(info, io.BytesIO(body))
        link = tarfile.TarInfo("link.xml")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
    before = set(tmp_path.parent.iterdir())
    with ExitStack() as stack:
        found = collect([zipped, tarred], stack)
        sources = [item.source for item in found.items]
        bodies = [item.read() for item in found.items]
    assert sources == [
        f"{zipped}:../escape.xml",
        f"{zipped}:a/1.xml",
        f"{zipped}:b/2.xml",
        f"{tarred}:1.xml",
        f"{tarred}:2.xml",
    ]
    assert bodies == [message(3), message(1), message(2), message(1), message(2)]
    assert found.ignored == 2  # notes.txt and the symbolic link
    assert set(tmp_path.parent.iterdir()) == before  # nothing written beside the archives


def test_an_oversized_member_is_refused_unread(tmp_path: Path) -> None:
    zipped = tmp_path / "a.zip"
    with zipfile.ZipFile(zipped, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("big.xml", b" " * 5000)
        archive.writestr("small.xml", b"<alert/>")
    (tmp_path / "big.xml").write_bytes(b" " * 5000)
    with ExitStack() as stack:
        found = collect([zipped, tmp_path / "big.xml"], stack, limit=1000)
        with pytest.raises(TooLarge, match="over the limit of 1000 bytes"):
            found.items[0].read()
        assert found.items[1].read() == b"<alert/>"
        with pytest.raises(TooLarge):
            found.items[2].read()


@pytest.mark.parametrize("name", ["missing.xml", "broken.zip", "broken.tar.gz"])
def test_an_unreadable_input_is_refused_before_anything_is_read(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name.startswith("broken"):
        path.write_bytes(b"not an archive at all")
    with ExitStack() as stack, pytest.raises(InputError, match=f"cannot read {path}"):
        collect([path], stack)


def test_import_of_a_folder_and_its_archives_shows_progress_and_a_summary(
    station_env: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = archive_tree(tmp_path / "archive", 7)
    code = main(["alerts", "import", "--progress", "--chunk", "3", str(tmp_path / "archive")])
    out, err = capsys.readouterr()
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == expected
    assert {line.split()[1] for line in out.splitlines()} == {"stored"}
    assert "7/7" in err  # the bar reached its total
    summary = err.strip().splitlines()[-1]
    assert summary.startswith("7 messages: 7 stored, 0 duplicates, 0 skipped, 0 problems")
    assert "from 7 files" in summary and "3 other files ignored" in summary
    assert stored_identifiers(station_env) == set(expected)

    # The same messages zipped: every one a duplicate now, read from the archive.
    zipped = tmp_path / "archive.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        for path in sorted((tmp_path / "archive").glob("day*/*.xml")):
            archive.write(path, path.relative_to(tmp_path))
    code = main(["alerts", "import", str(zipped)])
    out, err = capsys.readouterr()
    assert code == 0
    assert sorted(line.split()[0] for line in out.splitlines()) == sorted(expected)
    assert {line.split()[1] for line in out.splitlines()} == {"duplicate"}
    assert "7 messages: 0 stored, 7 duplicates" in err


def test_a_broken_member_is_one_problem_and_the_rest_is_stored(
    station_env: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tarred = tmp_path / "a.tar"
    with tarfile.open(tarred, "w") as archive:
        for name, body in (
            ("1.xml", message(11)),
            ("2.xml", b"<alert><open>"),
            ("3.xml", message(12)),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            archive.addfile(info, io.BytesIO(body))
    code = main(["alerts", "import", str(tarred)])
    out, err = capsys.readouterr()
    assert code == 1
    skipped = [line for line in out.splitlines() if line.startswith("skipped ")]
    assert len(skipped) == 1 and skipped[0].startswith(f"skipped {tarred}:2.xml: malformed XML")
    assert "3 messages: 2 stored, 0 duplicates, 0 skipped, 1 problem from 3 files" in err
    assert {"urn:example:archive:11", "urn:example:archive:12"} <= stored_identifiers(station_env)


def test_a_missing_path_stops_the_import_before_anything_is_stored(
    station_env: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.xml"
    good.write_bytes(message(21))
    assert main(["alerts", "import", str(good), str(tmp_path / "nope")]) == 1
    assert f"cannot read {tmp_path / 'nope'}" in capsys.readouterr().err
    assert "urn:example:archive:21" not in stored_identifiers(station_env)
