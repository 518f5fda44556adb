"""What ``pbem serve`` needs before it starts, checked without starting anything.

``check-config`` and ``serve`` both ask here, so a configuration that passes the check does not fail
at start for these reasons, and a server that cannot start says why in one line instead of a
traceback. Nothing is created and no mail server is contacted: the IMAP and relay settings are only
checked for consistency (their servers may be down at the moment and that is not a setup error). A
PostgreSQL database is different: without it the server cannot even store mail, so it is connected to
(and its schema version read).
"""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

from pbem.config import Config, setting_problems
from pbem.store import database_name, database_problem, sqlite_path

NO_DOOR = ("no door is open: set [imap] host, enable [smtp], or set [pipe] enabled = true when the "
           "MTA pipes mail into `pbem deliver`")

# The bind errors that are the configuration's fault (the port, the address), not the program's.
LISTEN_ERRNOS = (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES)


def startup_problems(config: Config) -> list[str]:
    """Every reason the server would not start with ``config``, one line each (empty: it would)."""
    found = setting_problems(config)
    if not config.imap.host and not config.smtp_enabled and not config.pipe_enabled:
        found.append(NO_DOOR)
    found.append(folder_problem("data directory", config.data_dir))
    database = database_problem(config.database_url)
    if database is not None:
        found.append(f"cannot open the database {database_name(config.database_url)}: {database}")
    else:
        path = sqlite_path(config.database_url)
        if path is not None and not path.exists() and path.parent != config.data_dir:
            found.append(folder_problem("database folder", path.parent))
    if config.smtp_enabled:
        found.append(listen_problem(config.smtp_host, config.smtp_port))
    return [problem for problem in found if problem]


def folder_problem(what: str, folder: Path) -> str | None:
    """Why the server could not create ``folder`` or write in it; asked of the nearest folder that
    exists, since a check creates nothing."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"cannot create the {what} {folder}: {existing} is not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        verb = "write to" if existing == folder else "create"
        return f"cannot {verb} the {what} {folder}: no permission to write to {existing}"
    return None


def listen_problem(host: str, port: int) -> str | None:
    """Bind (and let go of) the listener's address as the SMTP listener will: asyncio's
    ``create_server`` sets SO_REUSEADDR and binds every address the host name resolves to."""
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                       flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"cannot listen on {host}:{port}: {exc.strerror}"
    for family, kind, proto, _name, address in addresses:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                return listen_error(host, port, exc)
    return None


def listen_error(host: str, port: int, exc: OSError) -> str:
    reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
    hint = " (is another pbem serve running?)" if exc.errno == errno.EADDRINUSE else ""
    return f"cannot listen on {host}:{port}: {reason}{hint}"


__all__ = ["LISTEN_ERRNOS", "NO_DOOR", "folder_problem", "listen_error", "listen_problem",
           "startup_problems"]
