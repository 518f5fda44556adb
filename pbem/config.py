"""Server configuration from ``pbem.toml``: validated by ``schemas/config.schema.json``, every setting
with a default that works on one machine, so ``pbem serve`` runs with no file at all."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Kept off the import path of ``pbem deliver`` (started by the MTA once per mail): the schema
# validator (jsonschema, ~35 ms to import) and ssl are imported where they are used.


class ConfigError(ValueError):
    pass


def tls_problem(exc: BaseException, section: str) -> str | None:
    """What a failed TLS handshake means for the ``[section]`` settings, in the words of one log
    line; None when ``exc`` is no TLS failure."""
    import ssl

    if isinstance(exc, ssl.SSLCertVerificationError):
        return (f"TLS certificate not accepted ({exc.verify_message}); set [{section}] ca_file if "
                "the server has its own CA")
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed: {exc}"
    return None


@dataclass
class ImapConfig:
    host: str | None = None
    port: int | None = None
    security: str = "ssl"
    username: str = ""
    password: str = ""
    mailbox: str = "INBOX"
    processed_folder: str = "processed"
    poll_seconds: float = 60.0
    idle: bool = True
    idle_renew_seconds: float = 540.0
    max_backoff_seconds: float = 300.0
    # Where a message over the size limit is moved (after its sender got one notice).
    rejected_folder: str = "rejected"
    # A CA file (PEM) to trust instead of the system's, e.g. for a server with its own certificate.
    ca_file: str | None = None

    @property
    def effective_port(self) -> int:
        return self.port or (993 if self.security == "ssl" else 143)


@dataclass
class RelayConfig:
    host: str | None = None
    port: int | None = None
    security: str = "starttls"
    username: str = ""
    password: str = ""
    timeout_seconds: float = 30.0
    max_backoff_seconds: float = 3600.0
    # While mail waits after a failed connection, the relay is tried again this often; when it
    # answers, every waiting mail is due at once (its back-off is reset).
    probe_seconds: float = 30.0
    ca_file: str | None = None

    @property
    def effective_port(self) -> int:
        return self.port or {"ssl": 465, "starttls": 587}.get(self.security, 25)


@dataclass
class DeadlineConfig:
    """Move clocks: the default time control, reminders, what happens at a deadline, vacations."""

    default_days: float = 7
    reminders_hours: list[float] = field(default_factory=lambda: [48, 12])
    policy: str = "forfeit"  # forfeit | notify (the moderators decide)
    grace_reminder: bool = True  # forfeit only after a final reminder and 24 more hours
    # Days a year a player may be away: their vacations, and the days spent for them when their time
    # runs out (a whole day at a time, in all their games, before the deadline's policy); 0: neither.
    vacation_days_per_year: int = 30
    outage_threshold_minutes: float = 30


@dataclass
class LimitsConfig:
    """What one mail may cost. Checked in one cheap pass over the raw bytes before the full parse,
    because the stdlib parser's time grows with nesting, part and header counts (3,000 nested
    multiparts in 216 KB took 13 s). The defaults are far above what mail clients write (see the
    README, "Hostile and broken mail") and keep the reading of any message under 100 ms of CPU."""

    max_mime_depth: int = 20  # multipart and message/rfc822 levels
    max_mime_parts: int = 100  # parts of every level together
    max_header_fields: int = 500  # header fields of the message and of all its parts
    max_header_bytes: int = 128_000  # all header blocks together
    max_lines: int = 60_000  # lines of the whole message
    max_commands: int = 50  # command lines read from one mail; more get one note in the reply
    # Fairness: at most this many messages of one sender are processed per minute (0: no cap);
    # the rest wait in the store and are processed later, never dropped.
    sender_messages_per_minute: int = 120


@dataclass
class ChallengeConfig:
    """Open challenges (``new GAME open``): how long one waits for takers before it expires."""

    open_days: float = 14


@dataclass
class TournamentConfig:
    """Tournaments (``tournament new ...``): who may announce one, and how long a round lasts unless
    the organizer says (``round DAYS``)."""

    organizers: str = "moderators"  # moderators | players (any player with a proven address)
    round_days: float = 21


@dataclass
class ComputerConfig:
    """Computer players (``new GAME with computer:N``): the time a move of each searching level may
    take (levels 1 and 2 do not search), and the worker processes that think, apart from the mail."""

    level3_seconds: float = 2.0
    level4_seconds: float = 10.0
    workers: int = 1

    def seconds(self, level: int) -> float | None:
        return {3: self.level3_seconds, 4: self.level4_seconds}.get(level)


@dataclass
class Config:
    address: str = "pbem@localhost"
    name: str = "pbem"
    language: str = "en"  # of mails to a player who chose none (``set language``, README "Languages")
    # "movable": ``pbem admin clock +2d`` moves a running server's time forward (tests and demos
    # only; ``pbem check-config`` warns). "system": the real time.
    clock: str = "system"
    data_dir: Path = Path("./pbem-data")
    database: str = ""
    max_message_bytes: int = 2_000_000
    log_level: str = "INFO"
    auth_notice_interval_seconds: int = 3600
    # How often the processor looks for stored mail that nothing woke it for (a safety net: every
    # door and ``pbem deliver`` wake it); None: 5 s, or 1 s on PostgreSQL, where other workers store
    # mail too.
    poll_seconds: float | None = None
    # Days the raw mail of finished messages is kept: the scheduler prunes what is older once a day
    # (``pbem admin prune``; the rows stay). None: kept for ever.
    keep_mail_days: int | None = None
    # Processor processes of ``pbem serve``, each with its share of the games; None: 1. On SQLite
    # several apply their moves outside its write lock (``pbem.store.optimistic``) and use as many
    # cores, at some CPU more per move: for a machine with cores to spare.
    processors: int | None = None
    smtp_enabled: bool = True
    # The MTA's pipe runs ``pbem deliver`` for each message (deploy/pipe/): a door of its own, so
    # ``pbem serve`` need open none and only processes and sends what ``deliver`` stored.
    pipe_enabled: bool = False
    smtp_host: str = "127.0.0.1"
    smtp_port: int = 2525
    imap: ImapConfig = field(default_factory=ImapConfig)
    relay: RelayConfig = field(default_factory=RelayConfig)
    moderators: list[str] = field(default_factory=list)
    deadlines: DeadlineConfig = field(default_factory=DeadlineConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    challenges: ChallengeConfig = field(default_factory=ChallengeConfig)
    tournaments: TournamentConfig = field(default_factory=TournamentConfig)
    computer: ComputerConfig = field(default_factory=ComputerConfig)
    source: Path | None = None  # the file it was read from

    @property
    def database_url(self) -> str:
        return self.database or str(self.data_dir / "pbem.sqlite3")

    @property
    def outbox_maildir(self) -> Path:
        return self.data_dir / "outbox"


def _secret(section: dict[str, Any], base: Path, where: str) -> str:
    if "password_file" in section:
        path = Path(section["password_file"]).expanduser()
        if not path.is_absolute():
            path = base / path
        try:
            return path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"{where}.password_file: cannot read {path}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{where}.password_file: {path} is not UTF-8 text") from None
    return str(section.get("password", ""))


def config_from_dict(data: dict[str, Any], base: Path | None = None,
                     source: Path | None = None, *, check: bool = True) -> Config:
    """The configuration a parsed pbem.toml describes, validated against its schema.

    ``check=False`` skips the schema (``pbem deliver``, which the MTA starts once per mail, and
    which uses only the address, the size limit and where the data is: a file the schema would
    refuse still fails here when a value cannot be used, and ``pbem serve`` refuses it anyway).
    """
    if check:
        from pbem.resources import SchemaError, validate

        try:
            validate(data, "config", what=str(source or "configuration"))
        except SchemaError as exc:
            raise ConfigError(str(exc)) from None
    else:
        try:
            return _config_of(data, base, source)
        except (TypeError, ValueError, AttributeError) as exc:
            what = source or "configuration"
            raise ConfigError(f"{what}: {exc}; `pbem check-config` says what is wrong") from None
    return _config_of(data, base, source)


def _config_of(data: dict[str, Any], base: Path | None, source: Path | None) -> Config:
    base = base or Path.cwd()
    server = data.get("server", {})
    smtp = data.get("smtp", {})
    imap = data.get("imap", {})
    relay = data.get("relay", {})
    pipe_enabled = data.get("pipe", {}).get("enabled", False)
    data_dir = Path(server.get("data_dir", "./pbem-data")).expanduser()
    if not data_dir.is_absolute():
        data_dir = base / data_dir
    imap_cfg = ImapConfig(
        **{k: v for k, v in imap.items() if k not in ("password", "password_file")},
        password=_secret(imap, base, "imap"),
    )
    relay_cfg = RelayConfig(
        **{k: v for k, v in relay.items() if k not in ("password", "password_file")},
        password=_secret(relay, base, "relay"),
    )
    if imap_cfg.host and not imap_cfg.username:
        raise ConfigError("imap.username: required when imap.host is set")
    database = server.get("database", "")
    if database and "://" not in database and not Path(database).is_absolute():
        database = str(base / database)
    return Config(
        address=server.get("address", "pbem@localhost").lower(),
        name=server.get("name", "pbem"),
        language=server.get("language", "en"),
        clock=server.get("clock", "system"),
        data_dir=data_dir,
        database=database,
        max_message_bytes=server.get("max_message_bytes", 2_000_000),
        log_level=server.get("log_level", "INFO"),
        auth_notice_interval_seconds=server.get("auth_notice_interval_seconds", 3600),
        poll_seconds=server.get("poll_seconds"),
        keep_mail_days=server.get("keep_mail_days"),
        processors=server.get("processors"),
        smtp_enabled=smtp.get("enabled", imap_cfg.host is None and not pipe_enabled),
        pipe_enabled=pipe_enabled,
        smtp_host=smtp.get("host", "127.0.0.1"),
        smtp_port=smtp.get("port", 2525),
        imap=imap_cfg,
        relay=relay_cfg,
        moderators=[a.lower() for a in data.get("moderators", {}).get("addresses", [])],
        deadlines=DeadlineConfig(**data.get("deadlines", {})),
        limits=LimitsConfig(**data.get("limits", {})),
        challenges=ChallengeConfig(**data.get("challenges", {})),
        tournaments=TournamentConfig(**data.get("tournaments", {})),
        computer=ComputerConfig(**data.get("computer", {})),
        source=source,
    )


def load_config(path: Path | None, *, check: bool = True) -> Config:
    """Read ``path``; with None, read ./pbem.toml when present, else use the defaults. ``check``:
    see ``config_from_dict``."""
    if path is None:
        default = Path("pbem.toml")
        if not default.exists():
            return config_from_dict({}, check=check)
        path = default
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no such file: {path}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return config_from_dict(data, base=path.resolve().parent, source=path, check=check)


# Ports whose protocol fixes the security setting: implicit TLS, or plain text first (STARTTLS or none).
_TLS_PORTS = {"imap": 993, "relay": 465}
_PLAIN_PORTS = {"imap": (143,), "relay": (25, 587)}


def _port_problem(where: str, port: int | None, security: str) -> str | None:
    if port == _TLS_PORTS[where] and security != "ssl":
        return f'{where}.port {port} is the TLS port: security must be "ssl", not "{security}"'
    if port in _PLAIN_PORTS[where] and security == "ssl":
        return (f'{where}.port {port} starts in plain text: security must be "starttls" or "none", '
                'not "ssl"')
    return None


def setting_problems(config: Config) -> list[str]:
    """Settings that contradict each other, so the server would fail at the first connection (a TLS
    handshake on a plain port, a login without a password). Only settings: nothing is connected to."""
    found = []
    if config.imap.host:
        found.append(_port_problem("imap", config.imap.port, config.imap.security))
        if not config.imap.password:
            found.append("imap.password (or imap.password_file) is required when imap.host is set")
    if config.relay.host:
        found.append(_port_problem("relay", config.relay.port, config.relay.security))
        if bool(config.relay.username) != bool(config.relay.password):
            found.append("relay.username and relay.password (or password_file) go together: set both "
                         "or neither")
    return [problem for problem in found if problem]


EXAMPLE = '''\
# pbem.toml: configuration of the pbem play-by-email server.
# Every setting is optional; the values shown are the defaults. Check it with `pbem check-config`.

[server]
# The address players write to. Mails to a seat use plus-addresses: pbem+TOKEN@...
address = "pbem@localhost"
name = "pbem"
# The language of mails to players who chose none: en, de or sk. A player's first mail with a
# Content-Language or Accept-Language header picks theirs; 'set language de' changes it.
language = "en"
# Where the database, the outbox Maildir and logs live (relative to this file).
data_dir = "./pbem-data"
# The server's time: "system", or "movable" for end-to-end checks and demos only: then
# `pbem admin clock +2d` moves a running server two days ahead (deadlines, reminders, banks).
clock = "system"
# The database: a SQLite file (a path relative to this file, or sqlite:///path), or PostgreSQL, which
# several `pbem serve` workers can share (README "Scaling out"; the password goes in ~/.pgpass).
# database = "./pbem-data/pbem.sqlite3"            # default: DATA_DIR/pbem.sqlite3
# database = "postgresql://pbem@localhost/pbem"
# Larger mails are refused (SMTP 552, deliver exit 65, IMAP: moved aside, sender told once).
max_message_bytes = 2000000
log_level = "INFO"
# At most one "failed authentication" notice per seat within this interval.
auth_notice_interval_seconds = 3600
# How often the processor looks for stored mail nothing woke it for: every door, `pbem deliver`
# and `pbem admin` wake the server at once, so this is a safety net (default 5, 1 on PostgreSQL).
# poll_seconds = 5
# Days to keep the raw mail of finished messages (every mail received, every reply sent): the
# scheduler drops what is older once a day and keeps the rows (`pbem admin prune` does it by hand).
# Unset: kept for ever, and the database grows by every mail.
# keep_mail_days = 90
# Processor processes (parsing, rules, composing), each taking its share of the games. More than
# one pays on SQLite with cores to spare (README "Scaling out"); on PostgreSQL add workers instead.
# processors = 1

# The embedded SMTP listener: on by default when neither an IMAP host nor the pipe is set.
[smtp]
# enabled = true
host = "127.0.0.1"
port = 2525

# Mail handed over by the MTA on this machine: Postfix's pipe service runs
# `pbem deliver -c THIS-FILE -f ${sender}` for each message (deploy/pipe/ holds the Postfix files).
# Then `pbem serve` opens no door of its own; it processes what deliver stored and sends replies.
[pipe]
enabled = false

# A real mailbox, watched with IMAP IDLE (or polled), e.g. Dovecot fed by Postfix over LMTP
# (deploy/dovecot/). Uncomment to use.
[imap]
# host = "imap.example.org"
# port = 993
# security = "ssl"            # ssl | starttls | none
# username = "pbem@example.org"
# password_file = "/etc/pbem/imap-password"
mailbox = "INBOX"
processed_folder = "processed"
# Mails over max_message_bytes are moved here after their sender got one notice.
rejected_folder = "rejected"
# ca_file = "/etc/pbem/imap-ca.pem"   # trust this CA instead of the system's
poll_seconds = 60
idle = true
idle_renew_seconds = 540

# Outgoing mail. Without a host, mail is written to the Maildir DATA_DIR/outbox.
[relay]
# host = "smtp.example.org"
# port = 587
# security = "starttls"       # ssl | starttls | none
# username = "pbem@example.org"
# password_file = "/etc/pbem/smtp-password"
timeout_seconds = 30
max_backoff_seconds = 3600
# While mail waits for a relay that failed, it is tried again this often.
probe_seconds = 30
# ca_file = "/etc/pbem/relay-ca.pem"

[moderators]
addresses = []

# Move clocks. A game's time control is chosen at 'new' (time 5, time fischer 10+1.5 cap 10, time
# total 30, weekends off, nights off; command 'timecontrol'); this is the default: days per move.
[deadlines]
default_days = 7
# Reminders this many hours before a deadline (at most one reminder mail per player per day).
reminders_hours = [48, 12]
policy = "forfeit"            # forfeit | notify (mail the moderators, who decide)
# With forfeit: at the deadline send a final reminder and allow 24 more hours, once.
grace_reminder = true
# Days a year of vacation ('vacation FROM..TO'); a player whose time runs out spends them first, a
# day at a time in all their games, before the policy applies. 0: no vacations, no days spent.
vacation_days_per_year = 30
# A scheduler that was down longer than this extends every deadline by the outage.
outage_threshold_minutes = 30

# What one mail may cost (hostile or broken mail). A mail over a limit is stored as ignored with
# the reason; a registered player gets one short reply naming the limit.
[limits]
max_mime_depth = 20
max_mime_parts = 100
max_header_fields = 500
max_header_bytes = 128000
max_lines = 60000
# Command lines read from one mail; the rest are named in one line of the reply.
max_commands = 50
# At most this many mails of one sender are processed per minute (0: no cap); the rest wait.
sender_messages_per_minute = 120
# Open challenges ('new alien-city open'): anyone may join one until it expires.
[challenges]
open_days = 14

# Tournaments ('tournament new alien-city swiss rounds 5'): who may announce one (moderators, or
# any player), and the days a round lasts unless the organizer says ('round 14').
[tournaments]
organizers = "moderators"
round_days = 21

[computer]
# Computer players (new GAME with computer:N): seconds a move may take at levels 3 and 4 (levels
# 1 and 2 do not search), and worker processes that think, apart from the mail (one core each).
level3_seconds = 2.0
level4_seconds = 10.0
workers = 1
'''
