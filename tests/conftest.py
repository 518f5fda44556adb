"""Root fixtures: the real services the tests run against (see tests/services/).

* ``dovecot`` (session): a private Dovecot IMAP server; ``imap_user`` (function): a fresh user
  on it, as ``(user, password)``.
* ``postgres`` (session): a throw-away PostgreSQL cluster with database ``pbem_test``.
* ``smtp_sink`` (function): an aiosmtpd server that stores what it receives.

A missing service skips the tests that use it, or fails them under ``CI=true``. Servers start
only when a test asks for them and are stopped, with their temporary directories deleted, when
the session ends (finalizers; a reaper process covers a killed test process).
"""

from __future__ import annotations

import importlib.metadata
import secrets
from collections.abc import Iterator

import pytest

from tests.services import dovecot as _dovecot
from tests.services import postfix as _postfix
from tests.services import postgres as _postgres
from tests.services.dovecot import Dovecot, ImapUser
from tests.services.postgres import Postgres
from tests.services.requirements import in_ci
from tests.services.smtp_sink import SmtpSink


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say up front which real services this run can use (and whether missing ones fail)."""
    dv, pg = _dovecot.version(), _postgres.version()
    dovecot = f"dovecot {dv} ({_dovecot.binaries()[0]})" if dv else "dovecot MISSING"
    postgres = f"postgresql {pg} ({_postgres.bindir()})" if pg else "postgresql MISSING"
    smtp = f"aiosmtpd {importlib.metadata.version('aiosmtpd')}"
    pf = _postfix.version()
    postfix = f"postfix {pf}" if pf else "postfix MISSING"
    mode = "missing services FAIL (CI=true)" if in_ci() else "missing services skip"
    return [f"services: {dovecot}, {postgres}, {smtp}, {postfix}; {mode}"]


@pytest.fixture(scope="session")
def dovecot() -> Iterator[Dovecot]:
    """The session's private Dovecot (``.host``, ``.port``, ``.add_user``, ``.deliver``, ...)."""
    with Dovecot() as server:
        yield server


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """The session's throw-away PostgreSQL (``.dsn`` of ``pbem_test``, ``.create_database``)."""
    with Postgres() as server:
        yield server


@pytest.fixture
def smtp_sink() -> Iterator[SmtpSink]:
    """A fresh SMTP sink for this test (``.host``, ``.port``, ``.wait_for``, ``.messages``)."""
    with SmtpSink() as sink:
        yield sink


@pytest.fixture
def imap_user(dovecot: Dovecot) -> ImapUser:
    """A new user with an empty mailbox on the session Dovecot, unique per test."""
    dovecot.start()  # no-op unless an earlier test stopped the shared server and failed
    user = f"u{secrets.token_hex(6)}"
    password = secrets.token_urlsafe(12)
    dovecot.add_user(user, password)
    return ImapUser(user, password)
