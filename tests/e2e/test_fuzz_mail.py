"""10,000 mutated real mails through the doors of a running ``pbem serve``: half through its SMTP
listener, half through ``pbem deliver`` (see ``tests/e2e/fuzzing.py`` for the seeds and
``tests/e2e/mutations.py`` for the mutations: truncated MIME, broken boundaries, bad charsets and
encodings, NULs, deep nesting, huge header blocks, header injection with CR/LF and encoded words).

Afterwards: no traceback in the server's log; no message failed or left pending; every reply went
to an address that holds a seat (the server does not answer junk from strangers); no header was
injected into any reply, and nothing was sent to the injections' victim. The slowest message's
reading time and each process's peak memory are printed; their goals (100 ms of CPU, 300 MB)
are measured by ``bench/fuzz_mail.py``, not asserted here. About a minute on an idle machine.
"""

from __future__ import annotations

import email.utils
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.fuzzing import CORPUS, FuzzRun, headers
from tests.e2e.mutations import VICTIM
from tests.services.requirements import missing

COUNT = int(os.environ.get("PBEM_FUZZ_MAILS", "10000"))


@pytest.fixture
def fast_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder in memory (tmpfs) when there is one: what is tested here is the handling of
    hostile content, and 5,000 fsyncs of ``deliver`` would make the run twice as long."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="pbem-fuzz-", dir=shm))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_mutated_mail_through_smtp_and_deliver(fast_disk: Path) -> None:
    if not CORPUS.is_dir():
        missing(f"the mail corpus is not at {CORPUS}")
    result = FuzzRun(fast_disk, COUNT).run()

    assert "Traceback" not in result.log, result.log[result.log.index("Traceback") - 300:][:3000]
    assert set(result.deliver_codes) <= {0, 65}  # 65: over the size limit, said in one line
    assert set(result.refused) <= {"552"}, result.refused[:10]  # the same, in SMTP
    stored = sum(result.statuses.values())
    assert stored >= result.mails * 0.95  # truncation makes a few identical mails: stored once
    assert result.statuses.get("pending", 0) == 0 and result.statuses.get("failed", 0) == 0, result.statuses
    to_strangers = [(rcpts, result.answered.get(str(headers(raw)["In-Reply-To"])))
                    for rcpts, raw in result.replies if {r.lower() for r in rcpts} - result.seats]
    assert to_strangers == [], to_strangers[:5]
    for rcpts, raw in result.replies:
        head = headers(raw)
        names = [name.lower() for name in head]
        assert len(names) == len(set(names))  # no header twice (a second To, Subject, ...)
        assert not {"bcc", "cc", "resent-to", "resent-bcc"} & set(names)
        assert email.utils.parseaddr(str(head["To"]))[1] == rcpts[0] and VICTIM not in str(head["To"])

    reads = sorted(result.reads_ms)
    print(f"\n[fuzz] {result.mails} mails ({result.by_smtp} by SMTP, {result.by_deliver} by deliver) "
          f"in {result.seconds:.0f} s; {stored} stored: {result.statuses}; {len(result.replies)} "
          f"replies; slowest read {reads[-1]:.1f} ms of CPU (p99 {reads[int(len(reads) * 0.99)]:.1f}, "
          f"median {reads[len(reads) // 2]:.2f}); peak RSS listener {result.peak_mb['listener']:.0f} MB, "
          f"processor {result.peak_mb['processor']:.0f} MB")
