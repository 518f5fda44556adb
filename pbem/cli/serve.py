"""``pbem serve|deliver|process|init|check-config``: running the mail server and setting it up."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from pathlib import Path

from pbem.cli.common import SetupError, add_command, config_of, open_configured_store, setup_logging
from pbem.cli.deliver import HELP as DELIVER_HELP
from pbem.cli.deliver import add_arguments as add_deliver_arguments
from pbem.cli.deliver import cmd_deliver
from pbem.cli.preflight import LISTEN_ERRNOS, listen_error, startup_problems
from pbem.config import EXAMPLE, Config
from pbem.store import database_name, is_postgresql

MOVABLE_WARNING = ('[server] clock = "movable": `pbem admin clock +2d` moves this server\'s time '
                   "forward (deadlines, reminders, banks); for end-to-end checks and demos only, never "
                   "for real games")


def refused(command: str, problems: list[str]) -> int:
    """Print each reason the command cannot run, one line each; the exit status (2, or 0 if none)."""
    for problem in problems:
        print(f"pbem {command}: {problem}", file=sys.stderr)
    return 2 if problems else 0


def cmd_serve(args: argparse.Namespace, extra: list[str]) -> int:
    from pbem.clocks.movable import configured_clock
    from pbem.daemon.runner import Daemon
    from pbem.processing.processor import Processor

    config = config_of(args)
    if refused("serve", startup_problems(config)):
        return 2
    setup_logging(config)
    try:
        store = open_configured_store(config, create=True)
    except SetupError as exc:
        return refused("serve", [str(exc)])
    try:
        clock = configured_clock(config)  # the system's, or for checks and demos the movable one
        if config.clock != "system":
            logging.getLogger("pbem").warning(MOVABLE_WARNING)
        processor = Processor(config, store, clock)
        # The processor gets a process (and so a core) of its own; see pbem/daemon/runner.py. With
        # PostgreSQL other workers may store mail too: look for it every second, not every five.
        shared = is_postgresql(config.database_url)
        poll = config.poll_seconds or (1.0 if shared else 5.0)
        daemon = Daemon(config, store, processor, clock, processor_process=True,
                        processors=config.processors or 1,
                        processor_poll_seconds=poll,
                        sender_options={"idle_poll_seconds": 5.0} if shared else None)
        out = "Maildir " + str(config.outbox_maildir) if not config.relay.host else (
            f"relay {config.relay.host}:{config.relay.effective_port}")
        logging.getLogger("pbem").info("serving %s; data in %s; mail out via %s", config.address,
                                       config.data_dir, out)
        daemon.run_forever()
    except OSError as exc:  # the port was taken after the check above
        if exc.errno not in LISTEN_ERRNOS:
            raise
        return refused("serve", [listen_error(config.smtp_host, config.smtp_port, exc)])
    finally:
        store.close()
    if daemon.failure:
        print(f"pbem serve: stopped: {daemon.failure}", file=sys.stderr)
        return 1
    return 0


def cmd_process(args: argparse.Namespace, extra: list[str]) -> int:
    """One pass without a daemon (for cron jobs after ``pbem deliver``): process stored mail, run the
    deadline scheduler once, send the outbox."""
    import threading

    from pbem.clocks.movable import configured_clock
    from pbem.outbox.sender import OutboxSender
    from pbem.processing.processor import Processor

    config = config_of(args)
    setup_logging(config)
    from pbem.community.scheduler import Scheduler

    store = open_configured_store(config, create=True)
    clock = configured_clock(config)
    processor = Processor(config, store, clock)
    processed = processor.process_pending(10_000)
    report = Scheduler(config, store, clock, secret=processor.secret).run_once()
    sent = OutboxSender(store, config, clock, stop=threading.Event()).send_due_once()
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
    """Fails on what would stop ``pbem serve`` at start; contacts no IMAP or relay server."""
    config = config_of(args)
    if refused("check-config", startup_problems(config)):
        return 2
    print(f"configuration OK ({config.source or 'built-in defaults'})")
    print(f"  address {config.address}, data in {config.data_dir}, "
          f"database {database_name(config.database_url)}")
    if config.imap.host:
        print(f"  IMAP {config.imap.username}@{config.imap.host}:{config.imap.effective_port} "
              f"mailbox {config.imap.mailbox} -> {config.imap.processed_folder}")
    if config.smtp_enabled:
        print(f"  SMTP listener {config.smtp_host}:{config.smtp_port}")
    if config.pipe_enabled:
        print(f"  pipe: the MTA runs `{deliver_command(config)}` for each message "
              "(deploy/pipe/master.cf); serve processes what it stores")
    print("  mail out: " + (f"relay {config.relay.host}:{config.relay.effective_port}"
                            if config.relay.host else f"Maildir {config.outbox_maildir}"))
    print("  kept mail: " + (f"raw mail of finished messages: {config.keep_mail_days} days, then pruned "
                             "(rows stay)" if config.keep_mail_days
                             else "all raw mail, for ever ([server] keep_mail_days, `pbem admin prune`)"))
    if config.clock != "system":
        print(f"  warning: {MOVABLE_WARNING}")
    if config.deadlines.policy == "notify" and not config.moderators:
        print('  warning: [deadlines] policy = "notify" leaves every late player to the moderators, and '
              "[moderators] addresses is empty: nobody would decide (players may not choose notify "
              "either)")
    return 0


def deliver_command(config: Config) -> str:
    """The command line an MTA pipe runs for this configuration, as Postfix's master.cf writes it:
    this very program (by its full path when run as the installed ``pbem`` script) and this file."""
    program = Path(sys.argv[0])
    pbem = str(program.absolute()) if program.name == "pbem" else "pbem"
    source = str(config.source.absolute()) if config.source is not None else "pbem.toml"
    return f"{pbem} deliver -c {source} -f ${{sender}}"


def register_all(sub: argparse._SubParsersAction) -> None:
    def add(name: str, func: Callable[..., int], help_text: str) -> argparse.ArgumentParser:
        return add_command(sub, name, func, help_text)

    add("serve", cmd_serve, "run the mail server (IMAP and/or the embedded SMTP listener)")
    add_deliver_arguments(add("deliver", cmd_deliver, DELIVER_HELP))
    add("process", cmd_process, "process stored mail and send the outbox once, without a daemon")
    p = add("init", cmd_init, "write a commented example pbem.toml")
    p.add_argument("-o", "--output", default="pbem.toml", metavar="FILE",
                   help="where to write it (default: %(default)s)")
    p.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    add("check-config", cmd_check_config,
        "check the configuration (files, database, listener port, settings) and show what it means")


__all__ = ["register_all"]
