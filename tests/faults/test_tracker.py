"""The fault tracker itself: one line when a fault starts, one when it ends, the database's end
only once its echoes have settled; a failure mended at once (a dropped connection that works on
the next try, a restart of a second) is no fault in the log, one that lasts is, also when nothing
tries again; how long it lasted does not follow a wall clock that steps; what is a fault and what
is a bug; and the status question that ``pbem status`` asks a running server through its wake
socket."""

from __future__ import annotations

import errno
import logging
import sqlite3
import time
from pathlib import Path

import pytest

from pbem.clock import ManualClock
from pbem.faults import Faults, is_fault, reason_of, retry_once
from pbem.outbox.wake import WakeListener, ask_status
from pbem.store.common import StoreUnavailableError


def test_one_line_when_a_fault_starts_and_one_when_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="pbem.faults")
    ended: list[str] = []
    faults = Faults(settle_seconds=0.2, on_end=ended.append)
    full = sqlite3.OperationalError("database or disk is full")
    assert faults.failed("database", "smtp", full) is True
    for source in ("roles", "processor", "smtp"):
        assert faults.failed("database", source, full) is False
    assert faults.ok("database") is False  # an echo may still come: not over yet
    time.sleep(0.25)
    assert faults.ok("database") is True and ended == ["database"]
    assert faults.ok("database") is False
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.levelno >= logging.INFO]
    assert lines == [
        ("ERROR", "fault: the database cannot be used: OperationalError: database or disk is full "
                  "(free space on that disk) (seen by smtp); incoming mail is refused with a "
                  "temporary error (SMTP 451, deliver exit 75) and stays with its sender's mail "
                  "system; pbem retries by itself"),
        ("WARNING", lines[1][1]),
    ]
    assert lines[1][1].startswith("fault over: the database works again after ")
    assert lines[1][1].endswith("(4 failed attempt(s) meanwhile)")


def test_other_kinds_end_at_their_first_success() -> None:
    faults = Faults()
    faults.failed("relay", "sender", "relay x:25: 421 4.3.2 closing")
    faults.failed("outbox", "sender", OSError(errno.ENOSPC, "No space left on device"))
    (relay, outbox) = faults.snapshot()
    assert (relay["kind"], relay["what"], relay["sources"]) == ("relay", "the relay does not take mail",
                                                                ["sender"])
    assert outbox["reason"] == "No space left on device (free space on that disk)"
    assert faults.ok("relay") and faults.ok("outbox") and faults.snapshot() == []


def test_what_is_a_fault_of_the_surroundings() -> None:
    assert is_fault(StoreUnavailableError("Connection refused"))
    assert is_fault(sqlite3.OperationalError("attempt to write a readonly database"))
    assert is_fault(OSError(errno.EROFS, "Read-only file system"))
    assert is_fault(ConnectionResetError())
    assert not is_fault(sqlite3.OperationalError("no such table: games"))  # a bug
    assert not is_fault(KeyError("seat"))
    assert reason_of(OSError(errno.EROFS, "Read-only file system", "/data/x")) == (
        "Read-only file system: /data/x (the file system is read-only: check its mount and the disk)")


def test_retry_once_retries_a_fault_once_and_a_bug_never() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise StoreUnavailableError("server closed the connection unexpectedly")
        return "done"

    assert retry_once(flaky) == "done" and len(calls) == 2

    def buggy() -> None:
        calls.append(1)
        raise KeyError("x")

    calls.clear()
    with pytest.raises(KeyError):
        retry_once(buggy)
    assert len(calls) == 1


def test_the_status_question_through_the_wake_socket(tmp_path: Path) -> None:
    assert ask_status(tmp_path, timeout=0.5) is None  # nobody listens
    faults = Faults()
    faults.failed("imap", "imap", "imap.example.org:993: login refused")
    woken: list[int] = []
    listener = WakeListener(tmp_path, lambda: woken.append(1),
                            status=lambda: {"pid": 42, "faults": faults.snapshot()})
    assert listener.start() is not None
    try:
        report = ask_status(tmp_path)
        assert report is not None and report["pid"] == 42
        (fault,) = report["faults"]
        assert fault["what"] == "the IMAP server cannot be used"
        assert fault["reason"] == "imap.example.org:993: login refused"
        assert woken == []  # a question is no wake-up
    finally:
        listener.stop()


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "pbem.faults" and r.levelno >= logging.INFO]


def test_a_failure_mended_within_the_confirmation_time_is_no_fault(
        caplog: pytest.LogCaptureFixture) -> None:
    # the relay dropped the connection and the next mail went through on a new one; PostgreSQL
    # restarted in a fraction of a second: nothing for an administrator to read
    caplog.set_level(logging.DEBUG, logger="pbem.faults")
    ended: list[str] = []
    faults = Faults(confirm_seconds=0.5, on_end=ended.append)
    assert faults.failed("relay", "sender", "relay: SMTPServerDisconnected: Connection unexpectedly "
                                            "closed") is False
    assert faults.active("relay") and len(faults.snapshot()) == 1  # pbem status: failing now
    assert faults.ok("relay") is True and ended == ["relay"]  # what waited is woken all the same
    faults.failed("database", "processor", StoreUnavailableError("the database system is starting up"))
    faults.failed("database", "smtp", StoreUnavailableError("Connection refused"))
    assert faults.ok("database") is True  # no settling for what never counted
    time.sleep(0.7)  # the confirmation timers were cancelled
    assert _lines(caplog) == []
    assert any("mended before it counted as a fault" in r.getMessage() for r in caplog.records)


def test_a_fault_that_lasts_is_logged_from_its_first_failure_without_another_try(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="pbem.faults")
    faults = Faults(confirm_seconds=0.3)
    assert faults.failed("relay", "sender", "relay x:25: 421 4.3.2 closing") is False
    deadline = time.monotonic() + 10
    while not _lines(caplog):  # nothing tries again; the timer confirms it
        assert time.monotonic() < deadline, "the fault was never logged"
        time.sleep(0.02)
    (started,) = _lines(caplog)
    assert started == ("fault: the relay does not take mail: relay x:25: 421 4.3.2 closing (seen by "
                       "sender); replies wait in the outbox and leave when the relay takes them again")
    (shown,) = faults.snapshot()
    assert shown["failures"] == 1
    assert faults.failed("relay", "sender", "relay x:25: 421 4.3.2 closing") is False  # no 2nd line
    assert faults.ok("relay")
    started, ended = _lines(caplog)
    lasted = float(ended.split(" after ")[1].split(" s ")[0])
    assert lasted >= 0.3 and ended.endswith("(2 failed attempt(s) meanwhile)")


def test_how_long_a_fault_lasted_is_not_moved_by_the_wall_clock(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="pbem.faults")
    clock = ManualClock()
    faults = Faults(clock)
    faults.failed("outbox", "sender", OSError(errno.ENOSPC, "No space left on device"))
    clock.advance(-3600)  # an NTP correction of an hour while the disk was full
    assert faults.ok("outbox")
    ended = _lines(caplog)[1]
    assert ended.startswith("fault over: the outbox folder works again after 0.")  # not -3600.0 s
