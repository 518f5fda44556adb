"""`pbem init`, `pbem check-config` and `pbem serve` as an operator meets them: what would fail at start
is found by check-config, and serve refuses it with one line per problem and exit status 2.

check-config runs in this process through ``pbem.cli.main``; serve in a subprocess, as it is run.
"""

from __future__ import annotations

import email
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.cli import main
from tests.services.postgres import Postgres
from tests.services.requirements import LOOPBACK, free_port

PBEM = [sys.executable, "-m", "pbem.cli"]


def check(config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["check-config", "-c", str(config)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def serve(config: Path) -> subprocess.CompletedProcess[str]:
    """Runs until it stops by itself: every case here must be refused before the server starts."""
    return subprocess.run([*PBEM, "serve", "-c", str(config)], capture_output=True, text=True,
                          timeout=60)


def one_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def refused_by_both(config: Path, capsys: pytest.CaptureFixture[str], *fragments: str) -> None:
    """check-config and serve both exit 2 with the same single line naming the problem."""
    code, _, err = check(config, capsys)
    result = serve(config)
    for command, status, line in [("check-config", code, one_line(err)),
                                  ("serve", result.returncode, one_line(result.stderr))]:
        assert status == 2 and line.startswith(f"pbem {command}: "), line
        assert all(fragment in line for fragment in fragments), line


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port another program listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        sock.listen()
        yield sock.getsockname()[1]


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pbem.toml"
    path.write_text(text, encoding="utf-8")
    return path


# --- init --------------------------------------------------------------------------------------------

def test_init_offers_sqlite_and_postgresql_and_its_file_passes_the_check(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pbem.toml"
    assert main(["init", "-o", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {path}")
    text = path.read_text(encoding="utf-8")
    assert '# database = "postgresql://pbem@localhost/pbem"' in text
    assert "sqlite" in text.lower()
    # Port 2525 may be taken on a shared machine: the check would rightly fail on it.
    path.write_text(text.replace("port = 2525", "port = 0"), encoding="utf-8")
    code, out, err = check(path, capsys)
    assert (code, err) == (0, ""), err
    assert out.startswith("configuration OK")
    assert not (tmp_path / "pbem-data").exists(), "a check creates nothing"


def test_check_config_says_how_long_mail_is_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Unset, every mail is kept for ever; the example's commented line, uncommented, bounds it."""
    path = tmp_path / "pbem.toml"
    assert main(["init", "-o", str(path)]) == 0
    text = path.read_text(encoding="utf-8").replace("port = 2525", "port = 0")
    assert "# keep_mail_days = 90\n" in text
    path.write_text(text, encoding="utf-8")
    code, out, _err = check(path, capsys)
    assert code == 0
    assert "  kept mail: all raw mail, for ever ([server] keep_mail_days, `pbem admin prune`)" in out
    path.write_text(text.replace("# keep_mail_days = 90", "keep_mail_days = 90"), encoding="utf-8")
    code, out, _err = check(path, capsys)
    assert code == 0 and "  kept mail: raw mail of finished messages: 90 days, then pruned (rows stay)" in out
    path.write_text(text.replace("# keep_mail_days = 90", "keep_mail_days = 0"), encoding="utf-8")
    code, _out, err = check(path, capsys)
    assert code == 2 and "$.server.keep_mail_days: 0 is less than the minimum of 1" in err


def test_an_unreachable_postgresql_is_refused_by_check_config_and_serve(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"postgresql://pbem@127.0.0.1:{free_port()}/pbem"
    config = write_config(tmp_path, f'[server]\ndatabase = "{url}"\n[smtp]\nport = 0\n')
    refused_by_both(config, capsys, f"cannot open the database {url}: Connection refused")


def test_the_example_with_postgresql_passes_the_check(tmp_path: Path, postgres: Postgres,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """What a new user does: `pbem init`, uncomment the PostgreSQL line, name their server."""
    path = tmp_path / "pbem.toml"
    assert main(["init", "-o", str(path)]) == 0
    dsn = postgres.create_database("init_example")
    text = path.read_text(encoding="utf-8").replace(
        '# database = "postgresql://pbem@localhost/pbem"', f'database = "{dsn}"')
    path.write_text(text.replace("port = 2525", "port = 0"), encoding="utf-8")
    code, out, err = check(path, capsys)
    assert (code, err) == (0, ""), err
    assert f"database {dsn}" in out
    password = write_config(tmp_path, f'[server]\ndatabase = "{dsn.replace("@", ":s3cret@")}"\n'
                                      '[smtp]\nport = 0\n')
    code, out, err = check(password, capsys)
    assert code == 0 and "s3cret" not in out + err


# --- the listener port ---------------------------------------------------------------------------------

def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path, taken_port: int,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, f'[server]\ndata_dir = "data"\n[smtp]\nport = {taken_port}\n')
    expected = (f"cannot listen on 127.0.0.1:{taken_port}: address already in use "
                "(is another pbem serve running?)")
    code, _, err = check(config, capsys)
    assert (code, one_line(err)) == (2, f"pbem check-config: {expected}")
    result = serve(config)
    assert (result.returncode, one_line(result.stderr)) == (2, f"pbem serve: {expected}")


def test_a_free_port_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        port = sock.getsockname()[1]
    config = write_config(tmp_path, f"[smtp]\nport = {port}\n")
    code, out, err = check(config, capsys)
    assert (code, err) == (0, "")
    assert f"SMTP listener 127.0.0.1:{port}" in out


# --- folders and the database ------------------------------------------------------------------------

def test_a_data_dir_that_cannot_be_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("not a folder")
    config = write_config(tmp_path, '[server]\ndata_dir = "afile/data"\n[smtp]\nport = 0\n')
    refused_by_both(config, capsys, "cannot create the data directory", "afile is not a directory")


def test_a_database_that_cannot_be_opened(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "junk.sqlite3").write_bytes(b"this is no database\n" * 100)
    config = write_config(tmp_path, '[server]\ndatabase = "junk.sqlite3"\n[smtp]\nport = 0\n')
    refused_by_both(config, capsys, "cannot open the database", "not a database")
    assert (tmp_path / "junk.sqlite3").read_bytes() == b"this is no database\n" * 100


def test_a_database_folder_that_cannot_be_created(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("not a folder")
    config = write_config(tmp_path, '[server]\ndatabase = "afile/db/pbem.sqlite3"\n[smtp]\nport = 0\n')
    code, _, err = check(config, capsys)
    assert code == 2 and "cannot create the database folder" in one_line(err)


# --- doors, passwords and security settings -----------------------------------------------------------

def test_no_door_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, "[smtp]\nenabled = false\n")
    refused_by_both(config, capsys, "no door is open", "[imap] host", "enable [smtp]",
                    "[pipe] enabled = true", "pbem deliver")


def test_the_mta_pipe_is_a_door(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Postfix piping into `pbem deliver` (deploy/pipe/): serve opens no listener of its own, and the
    check shows the command line the MTA must run, with this very file."""
    config = write_config(tmp_path, '[server]\ndata_dir = "data"\n[pipe]\nenabled = true\n')
    code, out, err = check(config, capsys)
    assert (code, err) == (0, ""), err
    assert "SMTP listener" not in out and "IMAP" not in out
    assert f"pbem deliver -c {config} -f ${{sender}}` for each message" in out
    # The listener can still be opened beside the pipe on purpose.
    config = write_config(tmp_path, "[pipe]\nenabled = true\n[smtp]\nenabled = true\nport = 0\n")
    code, out, err = check(config, capsys)
    assert code == 0 and "SMTP listener 127.0.0.1:0" in out and "pbem deliver" in out


def test_serve_on_the_pipe_alone_processes_what_deliver_stored(tmp_path: Path) -> None:
    """The whole pipe door without the MTA: a mail handed to `pbem deliver` is answered into the
    outbox Maildir by a running `pbem serve`, which listens on no port."""
    config = write_config(tmp_path, '[server]\ndata_dir = "data"\n[pipe]\nenabled = true\n')
    mail = (b"From: ann@example.org\r\nTo: pbem@localhost\r\nSubject: help\r\n"
            b"Message-ID: <pipe-1@example.org>\r\n\r\nhelp\r\n")
    stored = subprocess.run([*PBEM, "deliver", "-c", str(config), "-f", "ann@example.org"], input=mail,
                            capture_output=True, timeout=60)
    assert stored.returncode == 0, stored.stderr
    server = subprocess.Popen([*PBEM, "serve", "-c", str(config)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        new = tmp_path / "data" / "outbox" / "new"
        deadline = time.monotonic() + 30
        while not (new.is_dir() and any(new.iterdir())) and time.monotonic() < deadline:
            time.sleep(0.05)
        replies = [email.message_from_bytes(path.read_bytes()) for path in new.iterdir()]
        assert [reply["To"] for reply in replies] == ["ann@example.org"]
        assert server.poll() is None, server.stderr.read() if server.stderr else ""
    finally:
        server.terminate()
        assert server.wait(30) == 0


@pytest.mark.parametrize("section", ["imap", "relay"])
def test_a_password_file_that_cannot_be_read(tmp_path: Path, section: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-folder").mkdir()
    for password_file, reason in [("missing-password", "No such file"), ("a-folder", "Is a directory")]:
        config = write_config(tmp_path, f'[{section}]\nhost = "mail.example.org"\nusername = "pbem"\n'
                                        f'password_file = "{password_file}"\n')
        code, _, err = check(config, capsys)
        line = one_line(err)
        assert code == 2 and f"{section}.password_file" in line and reason in line


def test_a_real_mailbox_setup_passes_without_contacting_the_servers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The deploy example's settings: the hosts do not exist, and the check does not ask them."""
    (tmp_path / "imap-password").write_text("secret1\n")
    (tmp_path / "smtp-password").write_text("secret2\n")
    config = write_config(tmp_path, """
[server]
data_dir = "data"
[smtp]
enabled = false
[imap]
host = "imap.example.invalid"
port = 993
security = "ssl"
username = "pbem@example.invalid"
password_file = "imap-password"
[relay]
host = "smtp.example.invalid"
port = 587
security = "starttls"
username = "pbem@example.invalid"
password_file = "smtp-password"
""")
    code, out, err = check(config, capsys)
    assert (code, err) == (0, "")
    assert "IMAP pbem@example.invalid@imap.example.invalid:993" in out


@pytest.mark.parametrize(("settings", "expected"), [
    ('[imap]\nhost = "h"\nusername = "u"\npassword = "p"\nport = 143\nsecurity = "ssl"',
     'imap.port 143 starts in plain text: security must be "starttls" or "none", not "ssl"'),
    ('[imap]\nhost = "h"\nusername = "u"\npassword = "p"\nport = 993\nsecurity = "starttls"',
     'imap.port 993 is the TLS port: security must be "ssl", not "starttls"'),
    ('[imap]\nhost = "h"\nusername = "u"',
     "imap.password (or imap.password_file) is required when imap.host is set"),
    ('[relay]\nhost = "h"\nport = 465\nsecurity = "none"',
     'relay.port 465 is the TLS port: security must be "ssl", not "none"'),
    ('[relay]\nhost = "h"\nport = 587\nsecurity = "ssl"',
     'relay.port 587 starts in plain text: security must be "starttls" or "none", not "ssl"'),
    ('[relay]\nhost = "h"\nusername = "u"',
     "relay.username and relay.password (or password_file) go together: set both or neither"),
])
def test_inconsistent_security_settings(tmp_path: Path, settings: str, expected: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, f"[smtp]\nport = 0\n{settings}\n")
    code, _, err = check(config, capsys)
    assert (code, one_line(err)) == (2, f"pbem check-config: {expected}")


def test_every_problem_is_listed_at_once(tmp_path: Path, taken_port: int,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("not a folder")
    config = write_config(tmp_path, f'[server]\ndata_dir = "afile/data"\n[smtp]\nport = {taken_port}\n'
                                    '[relay]\nhost = "h"\nport = 465\nsecurity = "starttls"\n')
    code, _, err = check(config, capsys)
    lines = err.splitlines()
    assert code == 2 and len(lines) == 3 and all(line.startswith("pbem check-config: ") for line in lines)


def test_the_deploy_worker_example_passes_the_check(tmp_path: Path, postgres: Postgres,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """deploy/workers/worker.toml.example, with this machine's database, folders and password files."""
    example = Path(__file__).resolve().parents[2] / "deploy" / "workers" / "worker.toml.example"
    (tmp_path / "pw").write_text("secret\n")
    text = example.read_text(encoding="utf-8")
    for old, new in [("postgresql://pbem@db.example.org/pbem", postgres.create_database("deploy_example")),
                     ("/var/lib/pbem/worker-1", str(tmp_path / "w1")),
                     ("/etc/pbem/imap-password", str(tmp_path / "pw")),
                     ("/etc/pbem/smtp-password", str(tmp_path / "pw")), ("port = 2525", "port = 0")]:
        assert old in text
        text = text.replace(old, new)
    code, out, err = check(write_config(tmp_path, text), capsys)
    assert (code, err) == (0, ""), err
    assert "SMTP listener 127.0.0.1:0" in out and "IMAP pbem@games.example.org@127.0.0.1:143" in out
