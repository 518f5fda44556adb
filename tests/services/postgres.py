"""A throw-away PostgreSQL cluster for tests.

Why not the packaged cluster: tests create and drop databases freely and must not depend on, or
damage, whatever a machine runs on 5432. Each ``Postgres`` runs ``initdb`` into a temporary
directory, listens on a free loopback port with its Unix socket inside that directory, trusts
loopback connections (no passwords to manage) and runs with fsync off, because durability of
test data is worthless and speed is not.

initdb and the server refuse to run as root, so as root everything runs as the unprivileged
``pbemtest`` user (see ``requirements.service_user``).
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from types import TracebackType

from .requirements import (
    LOOPBACK,
    Reaper,
    free_port,
    log_tail,
    missing,
    port_open,
    service_tmpdir,
    service_user,
)

INSTALL_HINT = (
    "postgresql not installed: apt-get install postgresql-15 (make test does this as root)"
)

#: Database superuser created by initdb; also the user in every DSN.
DB_USER = "pbemtest"
#: Database created at start and named by ``Postgres.dsn``.
DB_NAME = "pbem_test"

_VALID_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def bindir() -> Path | None:
    """Directory holding initdb/pg_ctl: the highest /usr/lib/postgresql/<N>/bin, else PATH."""

    def major(path: str) -> float:
        try:
            return float(Path(path).parent.parent.name)
        except ValueError:
            return -1.0

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=major)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).parent
    return None


def version() -> str | None:
    """``postgres --version`` of the binaries ``Postgres`` would use, for the report header."""
    d = bindir()
    if d is None:
        return None
    try:
        out = subprocess.run(
            [str(d / "postgres"), "--version"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"\(PostgreSQL\) (\S+)", out.stdout)
    return match.group(1) if match else out.stdout.strip() or None


class Postgres:
    """A private PostgreSQL cluster on ``127.0.0.1:<free port>`` with database ``pbem_test``.

    ``dsn`` connects to ``pbem_test`` as superuser ``pbemtest`` without a password;
    ``create_database(name)`` gives each test (or module) a database of its own. ``stop()`` /
    ``start()`` take the server down and bring it back on the same port with the same data (to
    test reconnecting); ``close()`` stops it for good and deletes the cluster. Usable as a
    context manager.
    """

    host: str = LOOPBACK

    def __init__(self, start_timeout: float = 30.0, durable: bool = False) -> None:
        bin_dir = bindir()
        if bin_dir is None:
            missing(INSTALL_HINT)
        self.bindir: Path = bin_dir
        self.start_timeout = start_timeout
        self.durable = durable  # the benchmarks' server: fsync and synchronous commit as shipped
        self._user: pwd.struct_passwd = service_user()
        self.tmp: Path = service_tmpdir("pbem-postgres-", self._user)
        self.data: Path = self.tmp / "data"
        self.socket_dir: Path = self.tmp / "sock"
        self.log_path: Path = self.tmp / "postgres.log"
        self.port: int = 0
        self._running = False
        self._closed = False
        self._reaper = Reaper([(self.data / "postmaster.pid", signal.SIGQUIT, False)], self.tmp)
        atexit.register(self.close)  # for instances a test forgets to close
        try:
            self._initdb()
            self.start()
            self.create_database(DB_NAME)
        except BaseException:
            self.close()
            raise

    # --- running things as the service user ------------------------------------------------

    def _run(self, *cmd: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run a PostgreSQL tool as the service user; raise with its output on failure."""
        as_other = os.geteuid() != self._user.pw_uid
        env = dict(os.environ, LC_ALL="C", PGTZ="UTC")
        if as_other:
            env.update(HOME=str(self.tmp), USER=self._user.pw_name, LOGNAME=self._user.pw_name)
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.tmp,
            env=env,
            user=self._user.pw_uid if as_other else None,
            group=self._user.pw_gid if as_other else None,
            extra_groups=[] if as_other else None,
            # pg_ctl start: the postmaster inherits this session, so a Ctrl-C in the terminal
            # reaches pytest (which stops the server cleanly) and not the server itself.
            start_new_session=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(
                f"{Path(cmd[0]).name} failed ({proc.returncode}): "
                f"{(proc.stderr or proc.stdout).strip()}\nlog tail:\n{log_tail(self.log_path)}"
            )
        return proc

    def _initdb(self) -> None:
        self.socket_dir.mkdir()
        os.chown(self.socket_dir, self._user.pw_uid, self._user.pw_gid)
        self._run(
            str(self.bindir / "initdb"),
            "-D", str(self.data),
            "-U", DB_USER,
            "--auth=trust",
            "-E", "UTF8",
            "--locale=C",
            "--no-sync",
            "--no-instructions",
        )  # fmt: skip
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                "\n# tests/services/postgres.py: throw-away test cluster\n"
                f"listen_addresses = '{self.host}'\n"
                f"unix_socket_directories = '{self.socket_dir}'\n"
                + ("shared_buffers = 256MB\n" if self.durable else
                   "fsync = off\n"
                   "synchronous_commit = off\n"
                   "full_page_writes = off\n"
                   "shared_buffers = 32MB\n")
                + "max_connections = 200\n"
                "timezone = 'UTC'\n"
                "log_min_messages = warning\n"
            )

    # --- lifecycle --------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """True between a successful ``start()`` and ``stop()``."""
        return self._running

    def start(self) -> None:
        """Start the server (again) and wait until it accepts connections.

        The first start picks a free port (retrying if another process grabs it first); later
        starts reuse it, so clients can reconnect to the same address after ``stop()``.
        """
        if self._closed:
            raise RuntimeError("this Postgres was closed")
        if self._running:
            return
        attempts = 1 if self.port else 5
        for attempt in range(attempts):
            if not self.port or attempts > 1:
                self.port = free_port(self.host)
            try:
                self._run(
                    str(self.bindir / "pg_ctl"),
                    "start",
                    "-D", str(self.data),
                    "-l", str(self.log_path),
                    "-o", f"-p {self.port}",
                    "-w",
                    "-t", str(int(self.start_timeout)),
                    timeout=self.start_timeout + 10,
                )  # fmt: skip
            except RuntimeError as exc:
                if "already in use" in str(exc) and attempt + 1 < attempts:
                    continue
                raise
            self._running = True
            return

    def stop(self) -> None:
        """Take the server down (``pg_ctl stop -m fast``: open sessions are terminated)."""
        if not self._running:
            return
        self._running = False
        try:
            self._run(str(self.bindir / "pg_ctl"), "stop", "-D", str(self.data), "-m", "fast", "-w")
        except RuntimeError:
            self._run(str(self.bindir / "pg_ctl"), "stop", "-D", str(self.data), "-m", "immediate")
        deadline = time.monotonic() + 5
        while port_open(self.host, self.port) and time.monotonic() < deadline:
            time.sleep(0.02)

    def crash_restart(self) -> None:
        """``pg_ctl restart -m immediate``: every session is cut without a goodbye (as in a crash)
        and the server recovers from its WAL; back on the same port."""
        self._run(
            str(self.bindir / "pg_ctl"), "restart", "-D", str(self.data), "-m", "immediate",
            "-l", str(self.log_path), "-o", f"-p {self.port}", "-w",
            "-t", str(int(self.start_timeout)), timeout=self.start_timeout + 10,
        )  # fmt: skip

    def close(self) -> None:
        """Stop for good and delete the cluster. Idempotent."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        try:
            self.stop()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self._reaper.dismiss()

    def __enter__(self) -> Postgres:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self._running else "stopped"
        return f"<Postgres {self.host}:{self.port} {state} {self.tmp}>"

    # --- databases --------------------------------------------------------------------------

    def dsn_for(self, dbname: str) -> str:
        """libpq URI for ``dbname`` on this server (``postgresql://pbemtest@127.0.0.1:P/db``)."""
        return f"postgresql://{DB_USER}@{self.host}:{self.port}/{dbname}"

    @property
    def dsn(self) -> str:
        """libpq URI of the ``pbem_test`` database."""
        return self.dsn_for(DB_NAME)

    def psql(self, sql: str, dbname: str = "postgres") -> str:
        """Run SQL with ``psql`` (no Python driver needed); returns unaligned, tuples-only output."""
        return self._run(
            str(self.bindir / "psql"),
            "-X", "-q", "-A", "-t",
            "-v", "ON_ERROR_STOP=1",
            "-h", self.host,
            "-p", str(self.port),
            "-U", DB_USER,
            "-d", dbname,
            "-c", sql,
        ).stdout  # fmt: skip

    def create_database(self, name: str) -> str:
        """Create database ``name`` (lower-case identifier) and return its DSN."""
        if not _VALID_NAME.match(name):
            raise ValueError(f"database name must be a lower-case identifier: {name!r}")
        self.psql(f'CREATE DATABASE "{name}"')
        return self.dsn_for(name)

    def drop_database(self, name: str) -> None:
        """Drop database ``name``, disconnecting whoever still uses it."""
        if not _VALID_NAME.match(name):
            raise ValueError(f"database name must be a lower-case identifier: {name!r}")
        self.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
