"""Grader files that hold expected values are the grader's alone (issue 29).

Under the weak-containment waiver a candidate is an ordinary host user: ``serve --journal``
wrote ``journal.sqlite3`` mode 0644, and a candidate read an earlier wrong answer's verdict,
with its expected value, and scored 1. Now the journal's folder is 0700 and its files 0600,
checked at open (an existing file too); batch OUT rows and reports are 0600.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import tempfile
import textwrap
from pathlib import Path

import pytest

from critpt_grader import codec
from critpt_grader.batch.outfile import OutWriter
from critpt_grader.private_files import (
    PrivacyError,
    private_file,
    private_folder,
    write_private_text,
)
from critpt_grader.sandbox.base import Job, Limits
from critpt_grader.sandbox.identity import sandbox_identity
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.server.journal import FILENAME, FILES, Journal
from critpt_grader.settings import Settings


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_journal_is_a_private_folder_of_private_files(tmp_path):
    journal = Journal(tmp_path / "journal")
    row = journal.accept(problem_id="p", task_row={"x": 1}, task_key=None, source="s")
    journal.finish(row, "candidate_mismatch", {"expected": "31337"})
    modes = {f.name: mode(f) for f in (tmp_path / "journal").iterdir()}  # SQLite's too
    journal.close()
    assert mode(tmp_path / "journal") == 0o700
    names = [FILENAME, f"{FILENAME}-shm", f"{FILENAME}-wal"]
    assert modes == dict.fromkeys(names, 0o600)


def test_an_existing_journal_open_to_others_is_narrowed_at_open(tmp_path):
    folder = tmp_path / "journal"
    Journal(folder).close()
    for path in (folder / FILENAME, folder / f"{FILENAME}-wal"):
        path.touch()
        path.chmod(0o644)
    folder.chmod(0o755)
    journal = Journal(folder)  # (a clean close removes the -wal: checked while open)
    assert mode(folder) == 0o700
    assert mode(folder / FILENAME) == mode(folder / f"{FILENAME}-wal") == 0o600
    journal.close()


def test_a_shared_folder_is_never_narrowed_the_journal_refuses_it(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    (shared / "someone-elses.txt").write_text("x")
    with pytest.raises(PrivacyError, match="other files"):
        Journal(shared)
    assert mode(shared) == 0o755  # a folder like /tmp keeps its mode
    assert not (shared / FILENAME).exists()


def test_the_database_file_named_alone_is_narrowed(tmp_path):
    path = tmp_path / "old.sqlite3"
    Journal(path).close()
    path.chmod(0o644)
    Journal(path).close()
    assert mode(path) == 0o600


def test_batch_out_rows_and_reports_are_private(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text("")
    out.chmod(0o644)  # an earlier run's, resumed
    with OutWriter(out) as writer:
        writer.write({"row": 0})
    assert mode(out) == 0o600
    write_private_text(tmp_path / "report.md", "# report\n")
    assert mode(tmp_path / "report.md") == 0o600
    assert (tmp_path / "report.md").read_text() == "# report\n"


def test_the_helpers_create_private_and_refuse_what_they_cannot_narrow(tmp_path):
    assert mode(private_file(tmp_path / "new")) == 0o600
    assert mode(private_folder(tmp_path / "new-folder", ours=frozenset())) == 0o700
    empty = tmp_path / "empty"
    empty.mkdir()
    empty.chmod(0o777)
    assert mode(private_folder(empty, ours=FILES)) == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="the weak run of a root grader")
def test_a_waived_weak_candidate_cannot_read_the_journals_verdicts():
    """The attack: a journal in an ordinary folder (its parent open to all, as
    /var/lib is), an earlier wrong answer's verdict in it, and a candidate run under the
    waiver (no bubblewrap) that looks for it."""
    identity = sandbox_identity(Settings().local.sandbox_user)
    assert identity is not None
    base = Path(tempfile.mkdtemp(prefix="critpt-journal-"))
    try:
        base.chmod(0o755)
        folder = base / "journal"
        journal = Journal(folder)
        row = journal.accept(problem_id="p", task_row=None, task_key="p", source="s")
        journal.finish(row, "candidate_mismatch", {"expected": "EXPECTED-31337"})
        journal.close()
        thief = textwrap.dedent(
            f"""
            import os
            NAMES = {sorted(FILES)!r}
            def f():
                found = {{}}
                for name in ({str(folder)!r}, *({str(folder)!r} + "/" + n for n in NAMES)):
                    try:
                        if os.path.isdir(name):
                            os.listdir(name)
                            found[name] = "listed"
                        else:
                            with open(name, "rb") as handle:
                                found[name] = "EXPECTED-31337" in handle.read().decode("latin-1")
                    except OSError as exc:
                        found[name] = type(exc).__name__
                return found
            """
        )
        call = {"args": [], "kwargs": {}}
        limits = Limits(wall_seconds=120, case_seconds=60)
        job = Job(source=thief, entrypoint="f", cases=(call,), limits=limits)

        async def go():
            settings = Settings(allow_weak_containment=True)
            async with LocalBackend(settings, bwrap="no-such-bwrap") as backend:
                return await backend.run(job)

        outcome = asyncio.run(go())
        assert outcome.status == "ok", outcome.detail
        assert "WARNING" in outcome.containment  # the waiver, as the attack had it
        found = codec.decode(outcome.cases[0].value)
        assert found[str(folder)] == "PermissionError", json.dumps(found)
        assert True not in found.values(), json.dumps(found)
    finally:
        shutil.rmtree(base, ignore_errors=True)
