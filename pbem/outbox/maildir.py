"""A write-only Maildir for outgoing mail when no relay is configured.

The usual Maildir delivery is followed (write into ``tmp/``, fsync, rename into ``new/``) so a
reader never sees half a message. Unlike a normal delivery the file name is derived from the
outbound row's id, not from time and pid: when the server crashes after the rename but before the
row is marked sent, the restarted sender delivers the same row again and the rename *replaces* the
earlier file instead of adding a second copy. Exactly one file per outbound mail, however often it
is retried.
"""

from __future__ import annotations

import os
from pathlib import Path

SUBDIRS = ("tmp", "new", "cur")


def ensure_maildir(path: Path) -> Path:
    """Create ``path`` with ``tmp/``, ``new/`` and ``cur/`` when missing; return ``path``."""
    for sub in SUBDIRS:
        (path / sub).mkdir(parents=True, exist_ok=True)
    return path


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Maildir:
    """The outbox Maildir at ``path`` (created on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        ensure_maildir(self.path)

    @staticmethod
    def name_for(outbound_id: int) -> str:
        """The file name of outbound row ``outbound_id``; stable across retries and restarts."""
        return f"pbem-outbound-{int(outbound_id):012d}"

    def path_for(self, outbound_id: int) -> Path:
        return self.path / "new" / self.name_for(outbound_id)

    def already_read(self, outbound_id: int) -> bool:
        """True when a reader already moved this mail to ``cur/`` (``name`` or ``name:2,FLAGS``)."""
        name = self.name_for(outbound_id)
        cur = self.path / "cur"
        return (cur / name).exists() or any(cur.glob(f"{name}:*"))

    def deliver(self, outbound_id: int, raw: bytes) -> Path:
        """Durably place ``raw`` as ``new/<name>``; returns the file's path.

        Idempotent: a repeated call replaces the same file, and does nothing when a reader has
        already taken the mail into ``cur/`` (delivering it again would show it twice).
        """
        ensure_maildir(self.path)
        target = self.path_for(outbound_id)
        if self.already_read(outbound_id):
            return target
        tmp = self.path / "tmp" / f"{self.name_for(outbound_id)}.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(raw)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_dir(target.parent)
        return target
