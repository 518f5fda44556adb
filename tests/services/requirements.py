"""What the real-service harness needs from the machine, and what happens when it is missing.

The project's rule: tests run against real services, never mocks. On a developer machine that
lacks one, the tests that need it SKIP with a reason that says how to get it; under CI
(``CI=true``) the same situation FAILS, because a CI run that silently skipped the IMAP tests
would report green without having tested anything.

Besides that policy this module holds the few process helpers that Dovecot and PostgreSQL share:
picking a free loopback port, the unprivileged OS user the servers run as (both refuse to, or
should not, run as root), a temporary directory that user can use, and a *reaper* process that
stops a server and deletes its directory if the test process dies without running its finalizers
(SIGKILL, ``os._exit`` from a timeout, a crashed interpreter).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest

#: The unprivileged OS user the servers run as when the tests run as root.
SERVICE_USER = "pbemtest"

LOOPBACK = "127.0.0.1"


def in_ci() -> bool:
    """True when a missing service must fail the run instead of skipping (``CI=true``)."""
    return os.environ.get("CI") == "true"


def missing(reason: str) -> NoReturn:
    """Give up on the current test (or fixture) because a service is not available.

    Skips with ``reason`` normally; fails with it under ``CI=true`` so CI can never go green
    without having run the service tests.
    """
    if in_ci():
        pytest.fail(f"{reason} [CI=true: a missing service is a failure, not a skip]")
    pytest.skip(reason)


def require(condition: bool, reason: str) -> None:
    """``missing(reason)`` unless ``condition`` holds."""
    if not condition:
        missing(reason)


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port on ``host`` that nobody listens on right now.

    There is an unavoidable race between closing this probe socket and the server binding the
    port; callers that start servers retry with a new port when the bind fails.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_open(host: str, port: int, timeout: float = 0.2) -> bool:
    """True when something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_for_port(
    host: str, port: int, timeout: float, alive: Callable[[], bool] | None = None
) -> bool:
    """Poll until ``host:port`` accepts connections; False on timeout or when ``alive()`` fails."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_open(host, port):
            return True
        if alive is not None and not alive():
            return False
        time.sleep(0.02)
    return False


def log_tail(path: Path, lines: int = 30) -> str:
    """The last ``lines`` lines of a server log, for error messages."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(no log at {path}: {exc})"
    return "\n".join(text.splitlines()[-lines:]) or "(log is empty)"


# --- the unprivileged user ------------------------------------------------------------------


def service_user() -> pwd.struct_passwd:
    """The OS user the servers run as.

    As root: ``pbemtest``, created with ``useradd -r`` when missing, because initdb refuses to run
    as root and Dovecot must not hand out root-owned mail processes. As anyone else: that user
    itself (both servers run fine unprivileged when every service user is the caller).
    """
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid())
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    if not os.path.exists(useradd):
        missing(f"cannot create the test user {SERVICE_USER!r}: useradd not found")
    proc = subprocess.run(
        [useradd, "-r", "-U", "-M", "-d", "/nonexistent", "-s", "/usr/sbin/nologin", SERVICE_USER],
        capture_output=True,
        text=True,
    )
    try:  # another test session may have created it at the same moment: look again
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        missing(f"useradd {SERVICE_USER} failed: {proc.stderr.strip()}")


def _traversable_by(path: Path, user: pwd.struct_passwd) -> bool:
    """True when ``user`` may enter every directory from / down to ``path``."""
    groups = {user.pw_gid} | set(os.getgrouplist(user.pw_name, user.pw_gid))
    for p in [path, *path.parents]:
        st = p.stat()
        if st.st_uid == user.pw_uid:
            ok = st.st_mode & stat.S_IXUSR
        elif st.st_gid in groups:
            ok = st.st_mode & stat.S_IXGRP
        else:
            ok = st.st_mode & stat.S_IXOTH
        if not ok:
            return False
    return True


def service_tmpdir(prefix: str, user: pwd.struct_passwd) -> Path:
    """A fresh private temporary directory owned by ``user``.

    Uses ``$TMPDIR`` when ``user`` can reach it and falls back to ``/tmp`` otherwise (a root
    session's ``TMPDIR`` may live under ``/root``); parents are never chmod-ed.
    """
    base = Path(tempfile.gettempdir()).resolve()
    if not _traversable_by(base, user):
        base = Path("/tmp")
    require(
        _traversable_by(base, user),
        f"no temporary directory that user {user.pw_name!r} can enter ({base})",
    )
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    os.chown(path, user.pw_uid, user.pw_gid)
    path.chmod(0o700)
    return path


# --- the reaper -----------------------------------------------------------------------------

_REAPER = r"""# pbem test-service reaper
import json, os, shutil, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
spec = json.loads(sys.argv[1])
if sys.stdin.buffer.read() == b"done":
    sys.exit(0)

def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False

pids = []
for pidfile, sig, group in spec["pidfiles"]:
    try:
        with open(pidfile) as f:
            pid = int(f.readline().strip())
        (os.killpg if group else os.kill)(pid, sig)
        pids.append(pid)
    except (OSError, ValueError):
        pass
deadline = time.monotonic() + 10
for pid in pids:
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    for kill in (os.killpg, os.kill):  # the server's process group, then the server itself
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass
time.sleep(0.2)
shutil.rmtree(spec["rmtree"], ignore_errors=True)
"""


class Reaper:
    """A watchdog process that cleans up after a server if this test process dies abruptly.

    It blocks reading a pipe from us. Normal shutdown writes ``done`` and it exits quietly; if
    the pipe closes without that (we were killed), it signals the pid in each pid file, kills
    what is left after 10 s, and deletes the server's temporary directory. It runs in its own
    session so Ctrl-C in the terminal reaches pytest (which then runs its finalizers) but not
    the reaper.
    """

    def __init__(self, pidfiles: list[tuple[Path, int, bool]], rmtree: Path) -> None:
        """``pidfiles``: ``(pid file, signal, whole process group?)`` for each server process
        to stop, read only when needed (the pid changes when a server restarts); ``rmtree``:
        the directory to delete afterwards."""
        spec = {
            "pidfiles": [(str(p), int(sig), bool(g)) for p, sig, g in pidfiles],
            "rmtree": str(rmtree),
        }
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _REAPER, json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def dismiss(self) -> None:
        """Tell the reaper everything was cleaned up normally and let it exit."""
        if self._proc.stdin is None or self._proc.stdin.closed:
            return
        try:
            self._proc.stdin.write(b"done")
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
