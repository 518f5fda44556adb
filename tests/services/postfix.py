"""A private, throw-away Postfix for tests: the deploy recipes of deploy/ run in it as they are.

Why a private instance: the deploy tests must show that the files an administrator copies into
/etc/postfix work, without touching the machine's own mail system. So each ``Postfix`` has its own
``config_directory`` (``postfix -c DIR start``, no postmulti), ``queue_directory`` and
``data_directory`` in a temporary directory and listens on free loopback ports only; the system
Postfix (``/etc/postfix``, port 25), installed with "No configuration", is never started or read.

What it is made of:

* master.cf: Debian's own (``/usr/share/postfix/master.cf.dist``, its services chrooted as they
  are on every Debian host), with the SMTP service on ``127.0.0.1:port``, plus ``relay_port``
  where the pbem server hands in its replies: that one accepts any recipient and bounces later,
  as a smarthost in front of the players' own mail servers does, so an unknown player makes a
  real delivery status notification (not a refusal at RCPT);
* main.cf: a mail host for the server's domain (``mydestination``) whose players live in
  ``players_domain``, each with a Maildir below ``mail_dir`` (virtual delivery, owned by the
  unprivileged test user), logging to ``postfix.log``;
* then, while it runs, the administrator's commands of a deploy recipe (``apply``: ``postconf
  -e``, ``postmap``, ``cat >>/etc/postfix/master.cf``, ``postfix reload``, ...), run by bash as
  written, with ``/etc/postfix`` meaning this instance's configuration directory and the Postfix
  commands working on this instance (``-c DIR``).
"""

from __future__ import annotations

import atexit
import contextlib
import email
import email.policy
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from email.message import EmailMessage
from pathlib import Path
from types import TracebackType

from .requirements import (
    LOOPBACK,
    Reaper,
    free_port,
    log_tail,
    missing,
    service_user,
    wait_for_port,
)
from .smtp_sink import SinkMessage

INSTALL_HINT = "postfix not installed: apt-get install postfix (make test does this as root)"

#: Debian's master.cf as the package ships it.
MASTER_CF_DIST = Path("/usr/share/postfix/master.cf.dist")

_MAIN_CF = """\
# Written by tests/services/postfix.py: a private test instance, loopback only.
compatibility_level = 3.6
queue_directory = {queue}
data_directory = {data}
mail_owner = postfix
setgid_group = postdrop
myhostname = mx.{domain}
mydomain = {domain}
myorigin = $mydomain
mydestination = {domain}, localhost
inet_interfaces = {host}
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
maillog_file = {tmp}/postfix.log
maillog_file_prefixes = {tmp}
alias_maps =
alias_database =
# The players: one Maildir each, owned by the unprivileged test user.
virtual_mailbox_domains = {players_domain}
virtual_mailbox_base = {mail}
virtual_mailbox_maps = texthash:{config}/players
virtual_uid_maps = static:{uid}
virtual_gid_maps = static:{gid}
virtual_minimum_uid = 1
# A refused delivery is retried soon and bounced at once when permanent; no waiting minutes.
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
"""


def binaries() -> dict[str, str] | None:
    """Paths of postfix, postmap and postconf, or None when Postfix is not installed."""
    found = {}
    for name in ("postfix", "postmap", "postconf"):
        path = shutil.which(name) or f"/usr/sbin/{name}"
        if not os.access(path, os.X_OK):
            return None
        found[name] = path
    return found


def version() -> str | None:
    """Installed Postfix version, e.g. ``3.7.11``, for the pytest report header."""
    found = binaries()
    if not found:
        return None
    out = subprocess.run([found["postconf"], "-d", "-h", "mail_version"], capture_output=True,
                         text=True, timeout=10)
    return out.stdout.strip() or None


def read_maildir(folder: Path) -> list[EmailMessage]:
    """Every message of a Maildir (new and cur), in delivery order, parsed as a mail client would."""
    paths = [p for sub in ("new", "cur") if (folder / sub).is_dir() for p in (folder / sub).iterdir()]
    paths.sort(key=lambda p: (p.stat().st_mtime_ns, p.name))
    return [email.message_from_bytes(p.read_bytes(), policy=email.policy.default)  # type: ignore[misc]
            for p in paths]


class Postfix:
    """A private Postfix on ``127.0.0.1:port`` (players submit) and ``relay_port`` (the server's
    replies), running until ``close()``.

    ``domain``: the server's domain (mydestination); ``players``: local parts of the players'
    mailboxes in ``players_domain``.
    """

    host: str = LOOPBACK

    def __init__(self, *, domain: str, players: list[str], players_domain: str = "players.test",
                 start_timeout: float = 30.0) -> None:
        found = binaries()
        if found is None:
            missing(INSTALL_HINT)
        if not MASTER_CF_DIST.exists():
            missing(f"no {MASTER_CF_DIST}: the Postfix tests use Debian's master.cf")
        if os.geteuid() != 0:
            missing("a private Postfix needs root (its master starts the services as their users)")
        self.bin = found
        self.domain = domain
        self.players_domain = players_domain
        self._user: pwd.struct_passwd = service_user()
        # Root's, as /etc/postfix and /var/spool/postfix are, in /tmp: the postfix user and the
        # pipe's user must pass through its parents ($TMPDIR may be below a private home).
        self.tmp = Path(tempfile.mkdtemp(prefix="pbem-postfix-", dir="/tmp"))
        self.tmp.chmod(0o755)
        self.config_dir = self.tmp / "etc"
        self.queue_dir = self.tmp / "queue"
        self.data_dir = self.tmp / "data"
        self.mail_dir = self.tmp / "mail"
        self.log_path = self.tmp / "postfix.log"
        for folder in (self.config_dir, self.queue_dir, self.data_dir, self.mail_dir):
            folder.mkdir(mode=0o755)
        shutil.chown(self.data_dir, "postfix")
        os.chown(self.mail_dir, self._user.pw_uid, self._user.pw_gid)
        self.port = 0
        self.relay_port = 0
        self._closed = False
        self._reaper = Reaper([(self.queue_dir / "pid" / "master.pid", signal.SIGTERM, True)], self.tmp)
        atexit.register(self.close)
        try:
            (self.config_dir / "players").write_text(
                "".join(f"{p}@{players_domain} {p}/Maildir/\n" for p in players))
            (self.config_dir / "main.cf").write_text(_MAIN_CF.format(
                tmp=self.tmp, queue=self.queue_dir, data=self.data_dir, config=self.config_dir,
                mail=self.mail_dir, domain=domain, players_domain=players_domain,
                host=self.host, uid=self._user.pw_uid, gid=self._user.pw_gid))
            self._start(start_timeout)
        except BaseException:
            self.close()
            raise

    def local_paths(self, text: str) -> str:
        """``text`` (a deploy file) with the system Postfix's folders replaced by this instance's."""
        return (text.replace("/etc/postfix/", f"{self.config_dir}/")
                .replace("/var/spool/postfix/", f"{self.queue_dir}/"))

    def apply(self, commands: list[str]) -> None:
        """Run an administrator's commands (one bash line each, as a recipe prints them) on this
        instance; fail with the command's output and the log when one fails."""
        prelude = "".join(f'{name}() {{ {path} -c "$PFCONF" "$@"; }}\n' for name, path in self.bin.items())
        for command in commands:
            proc = subprocess.run(["bash", "-c", prelude + self.local_paths(command)],
                                  capture_output=True, text=True, timeout=60,
                                  env={**os.environ, "PFCONF": str(self.config_dir)})
            if proc.returncode != 0:
                raise RuntimeError(f"{command!r} failed ({proc.returncode}): {proc.stderr.strip()}"
                                   f"\nlog tail:\n{log_tail(self.log_path)}")

    def run(self, program: str, *args: str) -> str:
        """``program -c CONFIG ARGS`` (postfix, postmap, postconf); raise with its output on failure."""
        proc = subprocess.run([self.bin[program], "-c", str(self.config_dir), *args],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise RuntimeError(f"{program} {' '.join(args)} failed ({proc.returncode}): "
                               f"{proc.stderr.strip()}\nlog tail:\n{log_tail(self.log_path)}")
        return proc.stdout

    def _start(self, timeout: float) -> None:
        for _attempt in range(3):
            self.port, self.relay_port = free_port(self.host), free_port(self.host)
            master = MASTER_CF_DIST.read_text()
            smtp = "smtp      inet  n       -       y       -       -       smtpd\n"
            assert smtp in master, f"{MASTER_CF_DIST}: no smtpd line to move to a test port"
            master = master.replace(smtp, (
                f"{self.host}:{self.port} inet n - y - - smtpd\n"
                f"{self.host}:{self.relay_port} inet n - y - - smtpd\n"
                "  -o smtpd_reject_unlisted_recipient=no\n"))
            (self.config_dir / "master.cf").write_text(master)
            self.run("postfix", "check")
            self.run("postfix", "start")
            if wait_for_port(self.host, self.port, timeout) and wait_for_port(self.host, self.relay_port, 5):
                return
            self.stop()
            if "Address already in use" not in log_tail(self.log_path):
                break
        raise RuntimeError(f"postfix did not listen on {self.host}:{self.port}\n{log_tail(self.log_path)}")

    def stop(self) -> None:
        """Stop the master (SIGTERM, which stops its services), then kill what is left."""
        pid_file = self.queue_dir / "pid" / "master.pid"
        try:
            pid = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            return
        with contextlib.suppress(ProcessLookupError):  # what `postfix stop` does, without its waits
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError):
                kill(pid, signal.SIGKILL)

    def close(self) -> None:
        """Stop for good and delete the temporary directory. Idempotent."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        self.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)
        self._reaper.dismiss()

    def __enter__(self) -> Postfix:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Postfix {self.host}:{self.port}/{self.relay_port} {self.tmp}>"

    # --- the players' side ------------------------------------------------------------------

    def address(self, player: str) -> str:
        return f"{player}@{self.players_domain}"

    def maildir(self, player: str) -> list[EmailMessage]:
        """What ``player`` has received, oldest first, as their mail client shows it."""
        return read_maildir(self.mail_dir / player / "Maildir")

    def arrivals(self, players: list[str]) -> Arrivals:
        """The players' Maildirs as one feed in arrival order (``wait_for`` as the SMTP sink has)."""
        return Arrivals({self.address(p): self.mail_dir / p / "Maildir" for p in players}, self.log_path)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


class Arrivals:
    """Mail delivered into several Maildirs, in the order it was first seen there.

    The order is kept as found, not re-sorted: two deliveries that finish out of order must not
    move a mail already handed out behind one that appears later. Each mail's ``received_at`` is
    when it was written into the Maildir (the file's time), on the monotonic clock.
    """

    def __init__(self, maildirs: dict[str, Path], log_path: Path) -> None:
        self.maildirs = maildirs
        self.log_path = log_path
        self._seen: set[Path] = set()
        self._items: list[SinkMessage] = []

    def _scan(self) -> None:
        found = []
        for address, folder in self.maildirs.items():
            for sub in ("new", "cur"):
                if not (folder / sub).is_dir():
                    continue
                for path in (folder / sub).iterdir():
                    if path not in self._seen:
                        found.append((path.stat().st_mtime_ns, path.name, path, address))
        for mtime, _name, path, address in sorted(found):
            self._seen.add(path)
            data = path.read_bytes()
            sender = email.message_from_bytes(data, policy=email.policy.default)["Return-Path"]
            # received_at: when the delivery agent wrote the file, on the monotonic clock
            delivered = time.monotonic() - max(0.0, time.time() - mtime / 1e9)
            self._items.append(SinkMessage(str(sender or "").strip("<>"), [address], data,
                                           received_at=delivered))

    def wait_for(self, count: int, timeout: float = 30.0) -> list[SinkMessage]:
        """Every mail so far, once there are at least ``count``; fails with the Postfix log."""
        deadline = time.monotonic() + timeout
        while True:
            self._scan()
            if len(self._items) >= count or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        if len(self._items) < count:
            raise AssertionError(f"{len(self._items)} of {count} mails arrived within {timeout:.0f} s"
                                 f"\npostfix log:\n{log_tail(self.log_path, 40)}")
        return list(self._items)

    @property
    def messages(self) -> list[SinkMessage]:
        self._scan()
        return list(self._items)
