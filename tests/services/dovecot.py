"""A private, throw-away Dovecot IMAP server for tests.

Why a private instance instead of the packaged one: tests need users, mailboxes and failure modes
(kicked connections, UIDVALIDITY changes, a server that goes away) that must not touch a real
mail system, and they need it on a port nobody else uses. So each ``Dovecot`` gets its own
config, ``base_dir``, state and mail in a temporary directory and listens on a free loopback
port; the system instance (``/etc/dovecot``, ``/run/dovecot``, ports 143/993) is never read or
touched, so the two coexist.

Recipe: /work/shared/recipes/dovecot-for-tests.md (verified on Dovecot 2.3.19).
"""

from __future__ import annotations

import atexit
import contextlib
import grp
import os
import pwd
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

from imapclient import IMAPClient

from .requirements import (
    LOOPBACK,
    Reaper,
    free_port,
    log_tail,
    missing,
    port_open,
    service_tmpdir,
    service_user,
    wait_for_port,
)
from .tls import Certificates

#: Dovecot's default auth_username_chars; also safe as a file name (no leading dot).
_USERNAME = re.compile(r"^[A-Za-z0-9_@-][A-Za-z0-9._@-]*$")

INSTALL_HINT = "dovecot not installed: apt-get install dovecot-imapd (make test does this as root)"

_CONFIG = """\
# Written by tests/services/dovecot.py: a private test instance, loopback only.
instance_name = pbem-test-{port}
base_dir = {tmp}/run
state_dir = {tmp}/state
log_path = {tmp}/dovecot.log
protocols = imap
listen = {host}
{ssl}
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_verbose = yes
default_internal_user = {user}
default_internal_group = {group}
default_login_user = {user}
# System users made by useradd -r have uids below the default first_valid_uid (500).
first_valid_uid = 1
# One passwd-file per user: Dovecot re-reads a passwd-file at most once per second, so with a
# single shared file a user added right after another one's login stays unknown for up to 1 s.
# A file nobody has looked up yet is always read fresh.
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {tmp}/users/%u
}}
# Tests try wrong passwords on purpose; don't make them wait the default 2 s for each.
auth_failure_delay = 0
userdb {{
  driver = static
  args = uid={user} gid={group} home={tmp}/home/%u
}}
mail_location = maildir:~/Maildir
# Durability is irrelevant for a throw-away server; speed is not.
mail_fsync = never
# IDLE is on by default; inotify wakes it at once, this is only the fallback poll interval.
mailbox_idle_check_interval = 1 secs
protocol imap {{
  mail_max_userip_connections = 1000
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    address = {host}
    port = {port}
  }}
  inet_listener imaps {{
    address = {host}
    port = {ssl_port}
  }}
}}
service anvil {{
  chroot =
  # No auth penalty: after a failed login anvil would delay every later login from 127.0.0.1
  # (2 s, doubling up to 15 s), and tests fail logins on purpose.
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}
service auth-worker {{
  user = $default_internal_user
}}
"""


class ImapUser(NamedTuple):
    """A user on a ``Dovecot``; unpacks as ``user, password = imap_user``."""

    user: str
    password: str


def _find(name: str) -> str | None:
    """A Dovecot binary from PATH or /usr/sbin (not on a non-root user's PATH on Debian)."""
    found = shutil.which(name)
    if found:
        return found
    for d in ("/usr/sbin", "/usr/bin", "/usr/local/sbin"):
        p = Path(d, name)
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def binaries() -> tuple[str, str] | None:
    """``(dovecot, doveadm)`` paths, or None when Dovecot with its IMAP server is not installed."""
    dovecot, doveadm = _find("dovecot"), _find("doveadm")
    if not dovecot or not doveadm:
        return None
    # dovecot-core alone has no IMAP server; dovecot-imapd adds libexec/dovecot/imap.
    libexecs = [Path(p) for p in ("/usr/lib/dovecot", "/usr/libexec/dovecot") if Path(p).is_dir()]
    if libexecs and not any((d / "imap").exists() for d in libexecs):
        return None
    return dovecot, doveadm


def version() -> str | None:
    """Installed Dovecot version, e.g. ``2.3.19.1``, for the pytest report header."""
    found = binaries()
    if not found:
        return None
    try:
        out = subprocess.run([found[0], "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.split()[0] if out.stdout.strip() else None


class Dovecot:
    """A private Dovecot on ``127.0.0.1:<free port>``, running until ``close()``.

    Each user has a passwd-file of its own that Dovecot reads on first use, so ``add_user``
    takes effect for the very next login without a reload. Every user's mail is a Maildir below
    the temporary directory, owned by the unprivileged service user (``pbemtest`` under root).

    ``stop()``/``start()`` take the server down and bring it back on the same port with the same
    users and mail (to test reconnecting clients); ``close()`` stops it for good and deletes
    everything. Usable as a context manager.
    """

    host: str = LOOPBACK

    def __init__(self, start_timeout: float = 10.0, tls: Certificates | None = None) -> None:
        """``tls``: also offer STARTTLS on ``port`` and implicit TLS (993-style) on ``ssl_port``,
        with that certificate."""
        found = binaries()
        if found is None:
            missing(INSTALL_HINT)
        self.dovecot_bin, self.doveadm_bin = found
        self.start_timeout = start_timeout
        self._user: pwd.struct_passwd = service_user()
        self.tmp: Path = service_tmpdir("pbem-dovecot-", self._user)
        self.conf: Path = self.tmp / "dovecot.conf"
        self.log_path: Path = self.tmp / "dovecot.log"
        self.users_dir: Path = self.tmp / "users"
        self.port: int = 0
        self.ssl_port: int = 0
        self.tls = tls
        self._passwords: dict[str, str] = {}
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._closed = False
        home = self.tmp / "home"
        home.mkdir()
        os.chown(home, self._user.pw_uid, self._user.pw_gid)
        self.users_dir.mkdir()
        self.users_dir.chmod(0o755)
        self._reaper = Reaper([(self.tmp / "run" / "master.pid", signal.SIGTERM, True)], self.tmp)
        atexit.register(self.close)  # for instances a test forgets to close
        try:
            self.start()
        except BaseException:
            self.close()
            raise

    # --- lifecycle --------------------------------------------------------------------------

    def _write_config(self) -> None:
        group = self._group_name()
        ssl = "ssl = no"
        if self.tls is not None:
            for name in ("cert", "key"):  # copies the service user can read
                source = getattr(self.tls, name)
                target = self.tmp / f"tls-{name}.pem"
                shutil.copyfile(source, target)
                os.chown(target, self._user.pw_uid, self._user.pw_gid)
            ssl = (f"ssl = yes\nssl_cert = <{self.tmp}/tls-cert.pem\nssl_key = <{self.tmp}/tls-key.pem\n"
                   "ssl_min_protocol = TLSv1.2")
        self.conf.write_text(
            _CONFIG.format(
                tmp=self.tmp, host=self.host, port=self.port, user=self._user.pw_name, group=group,
                ssl=ssl, ssl_port=self.ssl_port,
            )
        )

    def _group_name(self) -> str:
        return grp.getgrgid(self._user.pw_gid).gr_name

    @property
    def running(self) -> bool:
        """True while the master process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        """Start the server (again) and wait until it accepts connections.

        The first start picks a free port (retrying if another process grabs it first); later
        starts reuse it, so clients can reconnect to the same address after ``stop()``.
        """
        if self._closed:
            raise RuntimeError("this Dovecot was closed")
        if self.running:
            return
        attempts = 1 if self.port else 5
        error = ""
        for _ in range(attempts):
            if not self.port or attempts > 1:
                self.port = free_port(self.host)
                self.ssl_port = free_port(self.host) if self.tls is not None else 0
            self._write_config()
            self.log_path.touch()  # kept across restarts: the tail explains failures
            os.chown(self.log_path, self._user.pw_uid, self._user.pw_gid)
            stderr_path = self.tmp / "dovecot.stderr"
            # -F: stay in the foreground so we own the master's pid; own session so a Ctrl-C in
            # the terminal reaches pytest (which then stops us cleanly) and not the server.
            with stderr_path.open("wb") as stderr_file:
                self._proc = subprocess.Popen(
                    [self.dovecot_bin, "-F", "-c", str(self.conf)],
                    stdin=subprocess.DEVNULL,
                    stdout=stderr_file,
                    stderr=stderr_file,
                    start_new_session=True,
                    cwd=self.tmp,
                )
            if wait_for_port(self.host, self.port, self.start_timeout, lambda: self.running):
                return
            self._kill()
            stderr = stderr_path.read_text(errors="replace").strip()
            error = (
                f"dovecot did not start on {self.host}:{self.port} within "
                f"{self.start_timeout:.0f}s\nstderr: {stderr}\nlog tail:\n{log_tail(self.log_path)}"
            )
            if "Address already in use" not in error:
                break
        raise RuntimeError(error)

    def _kill(self) -> None:
        """Stop the master and its children.

        SIGTERM goes to the whole process group, so every imap process says ``BYE Server
        shutting down.`` to its client at once. The master itself then often lingers for about a
        second waiting on its own timers; after a short grace period it is killed, since nothing
        of value is left to flush in a throw-away instance.
        """
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.3)
        # Whatever is left in the master's process group (usually the master) goes now.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def stop(self) -> None:
        """Take the server down (connections drop, the port refuses); ``start()`` brings it back."""
        self._kill()
        deadline = time.monotonic() + 5
        while port_open(self.host, self.port) and time.monotonic() < deadline:
            time.sleep(0.02)

    def close(self) -> None:
        """Stop for good and delete the temporary directory. Idempotent."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        self._kill()
        shutil.rmtree(self.tmp, ignore_errors=True)
        self._reaper.dismiss()

    def __enter__(self) -> Dovecot:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<Dovecot {self.host}:{self.port} {state} {self.tmp}>"

    # --- administration ---------------------------------------------------------------------

    def doveadm(self, *args: str, input: bytes | None = None) -> str:
        """Run ``doveadm -c CONF ARGS`` against this instance; raise with its output on failure."""
        proc = subprocess.run(
            [self.doveadm_bin, "-c", str(self.conf), *args],
            input=input,
            capture_output=True,
            timeout=30,
        )
        if proc.returncode != 0:
            raise RuntimeError(
                f"doveadm {' '.join(args)} failed ({proc.returncode}): "
                f"{proc.stderr.decode(errors='replace').strip()}"
            )
        return proc.stdout.decode(errors="replace")

    def add_user(self, user: str, password: str) -> None:
        """Create ``user`` (or change its password); effective for the next login.

        Each user has a passwd-file of its own (``users/<user>``), which Dovecot reads on the
        first lookup, so a new user can log in immediately. Dovecot checks a file it has already
        read at most once per second, and only notices a change of mtime or size; so changing an
        existing user's password bumps the mtime and waits for the next second (rare; ≤ 1 s).
        """
        if not _USERNAME.match(user):
            raise ValueError(f"IMAP user names are [A-Za-z0-9._@-]+ (Dovecot's default): {user!r}")
        if any(c in password for c in ":\n\r"):
            raise ValueError("IMAP password must not contain ':' or line breaks")
        with self._lock:
            path = self.users_dir / user
            old = self._passwords.get(user)
            if old == password:
                return
            tmp = path.with_name(f".{user}.new")
            tmp.write_text(f"{user}:{{PLAIN}}{password}\n")
            tmp.chmod(0o644)
            if old is not None:
                stamp = int(path.stat().st_mtime)
                if int(tmp.stat().st_mtime) == stamp:
                    os.utime(tmp, (stamp + 1, stamp + 1))
            os.replace(tmp, path)
            self._passwords[user] = password
            if old is not None:
                time.sleep(1.05 - time.time() % 1)

    def password(self, user: str) -> str:
        """The password ``add_user`` set for ``user``."""
        return self._passwords[user]

    def deliver(self, user: str, raw: bytes, mailbox: str = "INBOX") -> None:
        """Put a message into ``user``'s ``mailbox`` as a mail delivery would (``doveadm save``).

        Connected clients see it like any new mail: an IDLE-ing client gets ``EXISTS``.
        """
        self.doveadm("save", "-u", user, "-m", mailbox, input=raw)

    def kick(self, user: str) -> None:
        """Drop all of ``user``'s IMAP connections (they get ``BYE`` and must reconnect)."""
        self.doveadm("kick", user)

    def create_mailbox(self, user: str, name: str) -> None:
        """Create mailbox ``name`` for ``user``; no error when it already exists."""
        try:
            self.doveadm("mailbox", "create", "-u", user, name)
        except RuntimeError as exc:
            if "exists" not in str(exc).lower():
                raise

    def set_uidvalidity(self, user: str, uidvalidity: int, mailbox: str = "INBOX") -> None:
        """Change ``mailbox``'s UIDVALIDITY, as after a server-side rebuild: clients must resync."""
        self.doveadm("mailbox", "update", "-u", user, "--uid-validity", str(uidvalidity), mailbox)

    def connect(self, user: str | None = None, password: str | None = None) -> IMAPClient:
        """An ``IMAPClient`` connected to this server, logged in when ``user`` is given."""
        client = IMAPClient(self.host, port=self.port, ssl=False, timeout=30)
        if user is not None:
            client.login(user, password if password is not None else self._passwords[user])
        return client

    def list_messages(self, user: str, mailbox: str = "INBOX") -> list[bytes]:
        """Raw bytes of every message in ``mailbox`` in UID order, fetched without setting
        ``\\Seen`` (read-only SELECT and ``BODY.PEEK[]``)."""
        client = self.connect(user)
        try:
            client.select_folder(mailbox, readonly=True)
            uids = sorted(client.search("ALL"))
            if not uids:
                return []
            data = client.fetch(uids, ["BODY.PEEK[]"])
            # a message another client moved away between SEARCH and FETCH is simply gone
            return [data[uid][b"BODY[]"] for uid in uids if b"BODY[]" in data.get(uid, {})]
        finally:
            try:
                client.logout()
            except Exception:
                client.shutdown()
