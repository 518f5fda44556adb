"""Server commands of ``pbem``: serve, deliver, process, init, check-config, send, mailbox."""

from __future__ import annotations

import argparse
import logging
import smtplib
import sys
from pathlib import Path

from pbem.config import EXAMPLE, Config, ConfigError, load_config


def _config(args: argparse.Namespace) -> Config:
    return load_config(Path(args.config) if args.config else None)


def _logging(config: Config) -> None:
    logging.basicConfig(level=getattr(logging, config.log_level, logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # aiosmtpd logs every SMTP command at INFO; our one line per processed message says enough.
    if config.log_level != "DEBUG":
        logging.getLogger("mail.log").setLevel(logging.WARNING)


def _open(config: Config):
    from pbem.store import open_store

    config.data_dir.mkdir(parents=True, exist_ok=True)
    return open_store(config.database_url)


def cmd_serve(args: argparse.Namespace, extra: list[str]) -> int:
    from pbem.daemon import Daemon
    from pbem.server.processor import Processor

    config = _config(args)
    _logging(config)
    store = _open(config)
    processor = Processor(config, store)
    # The processor gets a process (and so a core) of its own; see pbem/daemon.py.
    daemon = Daemon(config, store, processor, processor_process=True)
    if not config.imap.host and not config.smtp_enabled:
        print("pbem serve: no door is open: set [imap] host or enable [smtp]", file=sys.stderr)
        return 2
    out = "Maildir " + str(config.outbox_maildir) if not config.relay.host else (
        f"relay {config.relay.host}:{config.relay.effective_port}")
    logging.getLogger("pbem").info("serving %s; data in %s; mail out via %s", config.address,
                                   config.data_dir, out)
    daemon.run_forever()
    store.close()
    if daemon.failure:
        print(f"pbem serve: stopped: {daemon.failure}", file=sys.stderr)
        return 1
    return 0


def cmd_deliver(args: argparse.Namespace, extra: list[str]) -> int:
    from pbem.transport.deliver import EX_TEMPFAIL, deliver, read_message

    try:
        config = _config(args)
    except ConfigError as exc:
        print(f"pbem deliver: {exc}", file=sys.stderr)
        return EX_TEMPFAIL
    raw = read_message(sys.stdin.buffer, config.max_message_bytes)
    return deliver(config, raw, lambda: _open(config))


def cmd_process(args: argparse.Namespace, extra: list[str]) -> int:
    """One pass without a daemon (for cron jobs after ``pbem deliver``): process stored mail, run the
    deadline scheduler once, send the outbox."""
    import threading

    from pbem.server.processor import Processor
    from pbem.transport.sender import OutboxSender

    config = _config(args)
    _logging(config)
    from pbem.scheduler import Scheduler

    store = _open(config)
    processor = Processor(config, store)
    processed = processor.process_pending(10_000)
    report = Scheduler(config, store, secret=processor.secret).run_once()
    sent = OutboxSender(store, config, stop=threading.Event()).send_due_once()
    counts = store.outbound_counts()
    store.close()
    print(f"processed {processed} message(s); scheduler queued {report.mails} mail(s); sent {sent}; "
          f"{counts.get('pending', 0)} waiting in the outbox")
    return 0


def cmd_init(args: argparse.Namespace, extra: list[str]) -> int:
    path = Path(args.output)
    if path.exists() and not args.force:
        print(f"pbem init: {path} exists (use --force to overwrite)", file=sys.stderr)
        return 2
    path.write_text(EXAMPLE, encoding="utf-8")
    print(f"wrote {path}: every setting is shown with its default; edit and check with "
          f"`pbem check-config -c {path}`")
    return 0


def cmd_check_config(args: argparse.Namespace, extra: list[str]) -> int:
    config = _config(args)
    print(f"configuration OK ({config.source or 'built-in defaults'})")
    print(f"  address {config.address}, data in {config.data_dir}, database {config.database_url}")
    if config.imap.host:
        print(f"  IMAP {config.imap.username}@{config.imap.host}:{config.imap.effective_port} "
              f"mailbox {config.imap.mailbox} -> {config.imap.processed_folder}")
    if config.smtp_enabled:
        print(f"  SMTP listener {config.smtp_host}:{config.smtp_port}")
    print("  mail out: " + (f"relay {config.relay.host}:{config.relay.effective_port}"
                            if config.relay.host else f"Maildir {config.outbox_maildir}"))
    return 0


def cmd_send(args: argparse.Namespace, extra: list[str]) -> int:
    """Submit a mail to the local listener as a player's mail client would."""
    from pbem.mail.client import mails_for, new_mail, reply_to

    config = _config(args)
    body = " ".join(args.text).replace("\\n", "\n")
    if args.reply:
        received = mails_for(config.outbox_maildir, args.sender)
        if not received:
            print(f"pbem send: {args.sender} has received no mail to reply to", file=sys.stderr)
            return 2
        message = reply_to(received[-1], args.sender, body)
    else:
        message = new_mail(args.sender, args.to or config.address, body, args.subject or "")
    host, port = args.host or config.smtp_host, args.port or config.smtp_port
    try:
        with smtplib.SMTP(host, port, timeout=30) as smtp:
            smtp.send_message(message)
    except (OSError, smtplib.SMTPException) as exc:
        print(f"pbem send: cannot submit to {host}:{port}: {exc} (is `pbem serve` running?)",
              file=sys.stderr)
        return 1
    print(f"sent {message['Subject']!r} from {args.sender} to {message['To']}")
    return 0


def cmd_mailbox(args: argparse.Namespace, extra: list[str]) -> int:
    """What an address received, read from the outbox Maildir of the embedded setup."""
    from pbem.mail.client import mails_for, plain_text

    config = _config(args)
    received = mails_for(config.outbox_maildir, args.address)
    if not received:
        print(f"no mail for {args.address} in {config.outbox_maildir}")
        return 0
    shown = received if args.all else received[-1:]
    for message in shown:
        print(f"From: {message['From']}\nTo: {message['To']}\nReply-To: {message.get('Reply-To', '')}")
        print(f"Date: {message['Date']}\nSubject: {message['Subject']}\n")
        print(plain_text(message))
        print("=" * 72)
    if not args.all and len(received) > 1:
        print(f"({len(received)} mails in all; --all shows every one)")
    return 0


def register_all(sub: argparse._SubParsersAction) -> None:
    def add(name: str, func, help_text: str) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, help=help_text, description=help_text)
        parser.add_argument("-c", "--config", help="pbem.toml (default: ./pbem.toml if present, "
                                                   "else built-in defaults)")
        parser.set_defaults(func=func)
        return parser

    add("serve", cmd_serve, "run the mail server (IMAP and/or the embedded SMTP listener)")
    add("deliver", cmd_deliver, "store one message from standard input (for an MTA pipe); "
                                "exit 0 stored, 75 try later")
    add("process", cmd_process, "process stored mail and send the outbox once, without a daemon")
    p = add("init", cmd_init, "write a commented example pbem.toml")
    p.add_argument("-o", "--output", default="pbem.toml")
    p.add_argument("--force", action="store_true")
    add("check-config", cmd_check_config, "validate the configuration and show what it means")
    p = add("send", cmd_send, "send a mail to the local listener as a player would")
    p.add_argument("--from", dest="sender", required=True, help="the player's address")
    p.add_argument("--to", help="default: the server address")
    p.add_argument("--subject")
    p.add_argument("--reply", action="store_true",
                   help="reply to the newest mail this address received (Reply-To, Re:, quoting)")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument("text", nargs="+", help="the body; \\n starts a new line")
    p = add("mailbox", cmd_mailbox, "show the mail an address received (embedded Maildir outbox)")
    p.add_argument("address")
    p.add_argument("--all", action="store_true")


__all__ = ["register_all"]
