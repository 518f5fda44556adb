"""The server secret behind every seat token, kept in the database so that all workers sharing it
derive the same tokens: a reply whose token one worker wrote is accepted by any other.

Before several workers existed the secret lived in ``DATA_DIR/secret.key``. On the first start of
this version that file, if present, is taken into the database (nothing else changes: every token
already mailed stays valid); without one a new secret is made. Whichever worker writes first wins and
the others read its value (``Tx.init_meta``), so workers starting at once still agree.

The price: the database now holds what a token is derived from. A copy of it (a backup, a dump)
lets its reader compute tokens, so keep it as private as the old secret file; to revoke, put a new
value (64 hex digits) under ``server.secret`` in the ``meta`` table, which invalidates every token.
"""

from __future__ import annotations

import logging
import secrets
from pathlib import Path

from pbem.store.base import Store, Tx

log = logging.getLogger(__name__)

SECRET_KEY = "server.secret"
LEGACY_FILE = "secret.key"


def server_secret(store: Store, data_dir: Path | None = None) -> bytes:
    """The secret in ``store``; on first use taken from ``data_dir/secret.key`` if that exists."""
    with store.transaction() as tx:
        value = tx.get_meta(SECRET_KEY)
    if value:
        return bytes.fromhex(value)
    legacy = _read_legacy(data_dir)
    candidate = legacy if legacy is not None else secrets.token_bytes(32)
    with store.transaction() as tx:
        value = tx.init_meta(SECRET_KEY, candidate.hex())
    if legacy is not None and value == legacy.hex():
        log.info("secret: %s taken into the database (every worker now uses it)",
                 Path(data_dir or ".") / LEGACY_FILE)
    return bytes.fromhex(value)


def secret_in(tx: Tx) -> bytes:
    """The secret, inside the caller's transaction (made as ``server_secret`` makes it if no
    worker has yet): for what needs it while it holds one, e.g. a pseudonym in a mail."""
    value = tx.get_meta(SECRET_KEY) or tx.init_meta(SECRET_KEY, secrets.token_bytes(32).hex())
    return bytes.fromhex(value)


def _read_legacy(data_dir: Path | None) -> bytes | None:
    if data_dir is None:
        return None
    try:
        return bytes.fromhex((Path(data_dir) / LEGACY_FILE).read_text().strip())
    except FileNotFoundError:
        return None
