"""``pbem deliver`` is started by the MTA once per mail: it imports what storing a mail needs and
nothing else (no games, no templates, no schema validator, no mail reader, no other door)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pbem.store.sqlite import SQLiteStore
from tests.transport import make_message

REPO = Path(__file__).resolve().parents[2]

#: Packages whose import would mean the short way was not taken (each costs 10-70 ms a mail).
#: (The store's intake reads the header block with the stdlib's email parser: that one it needs.)
HEAVY = ("engine", "jinja2", "babel", "jsonschema", "imapclient", "aiosmtpd", "psycopg", "ssl",
         "email.mime", "email.generator", "pbem.i18n", "pbem.processing",
         "pbem.community", "pbem.reading", "pbem.outbox.compose", "pbem.outbox.sender",
         "pbem.daemon", "pbem.doors.smtp_listener", "pbem.doors.imap_watcher", "pbem.archive",
         "pbem.commands", "pbem.record", "pbem.cli.serve", "pbem.cli.preflight")

PROBE = """
import json, sys
from pbem.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def test_deliver_stores_the_mail_and_imports_nothing_heavy(tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = tmp_path / "pbem.toml"
    config.write_text(f'[server]\ndata_dir = "{data}"\n[relay]\nhost = "relay.example.org"\n')
    raw = make_message("an ordinary move")
    result = subprocess.run([sys.executable, "-c", PROBE, "deliver", "-c", str(config),
                             "-f", "alice@example.org"], input=raw, capture_output=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60, check=True)
    report = json.loads(result.stdout)
    assert report["code"] == 0, result.stderr.decode()
    loaded = [name for name in report["modules"]
              if any(name == heavy or name.startswith(heavy + ".") for heavy in HEAVY)]
    assert loaded == [], f"pbem deliver imported {loaded}"
    with SQLiteStore(data / "pbem.sqlite3") as store:
        (row,) = list(store.iter_inbound())
    assert (row.source, row.status, row.raw, row.envelope_from) == ("deliver", "pending", raw,
                                                                     "alice@example.org")


def test_the_other_commands_still_load_what_they_need(tmp_path: Path) -> None:
    """The short way is taken for ``deliver`` alone: ``pbem --help`` still lists every game."""
    result = subprocess.run([sys.executable, "-m", "pbem.cli", "--help"], capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert result.returncode == 0 and "alien-city" in result.stdout


def test_an_unusable_setting_is_a_temporary_failure_in_one_line(tmp_path: Path) -> None:
    """Without the schema check, a value deliver cannot use still fails, as "try again later" (the
    MTA keeps the mail while the administrator fixes the file), in one line that says where to look."""
    config = tmp_path / "pbem.toml"
    config.write_text("[server]\ndata_dir = 5\n")
    result = subprocess.run([sys.executable, "-m", "pbem.cli", "deliver", "-c", str(config)],
                            input=make_message(), capture_output=True, text=False, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    err = result.stderr.decode()
    assert result.returncode == 75, err
    assert err.startswith("pbem deliver: ") and err.count("\n") == 1 and "check-config" in err
