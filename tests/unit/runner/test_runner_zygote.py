"""The supervisor's handle on the zygote: answers are matched to requests, never taken out of
step, and a zygote that stops answering is never used again (issue 16).

The zygote's side is played here by the test over a real socket pair; the real zygote runs in
every sandbox test (tests/sandbox/test_job_isolation.py).
"""

from __future__ import annotations

import json
import os
import socket

import pytest

from critpt_grader.runner.zygote import SPAWN_FDS, Zygote, ZygoteGone


@pytest.fixture
def pair():
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    read_end, write_end = os.pipe()
    # The test's own pid stands in for the zygote's: SIGCONT to it changes nothing.
    yield Zygote(pid=os.getpid(), channel=ours), theirs, (read_end, write_end) * 2
    for closable in (ours, theirs):
        closable.close()
    for fd in (read_end, write_end):
        os.close(fd)


def answer(theirs: socket.socket, **message) -> None:
    theirs.send(json.dumps(message).encode())


def test_a_spawn_sends_its_descriptors_and_takes_only_its_own_answer(pair):
    zygote, theirs, fds = pair
    answer(theirs, id=0, pid=4242)  # late: the answer to an earlier request
    answer(theirs, id=1, pid=4343)
    assert zygote.spawn(fds, first=2, budget=10, seconds=5) == 4343
    data, received, _, _ = socket.recv_fds(theirs, 256, SPAWN_FDS)
    assert json.loads(data) == {"id": 1, "first": 2, "budget": 10}
    assert len(received) == SPAWN_FDS
    for fd in received:
        os.close(fd)


def test_a_wait_takes_the_exit_of_its_own_process_only(pair):
    zygote, theirs, fds = pair
    answer(theirs, id=1, pid=4343)
    pid = zygote.spawn(fds, first=0, budget=10, seconds=5)
    assert zygote.wait(pid, 0.01) == (None, 0.0)  # still running
    answer(theirs, id=0, exited=4242, status=0, cpu=9.0)  # an earlier process's
    answer(theirs, id=1, exited=4343, status=9, cpu=0.5)
    assert zygote.wait(pid, 5) == (9, 0.5)


def test_a_zygote_that_does_not_answer_is_never_used_again(pair):
    zygote, theirs, fds = pair
    with pytest.raises(ZygoteGone, match="did not answer"):
        zygote.spawn(fds, first=0, budget=10, seconds=0.05)
    answer(theirs, id=1, pid=4343)  # its answer comes late
    with pytest.raises(ZygoteGone, match="ended"):
        zygote.spawn(fds, first=0, budget=10, seconds=5)
    assert not zygote.alive()


def test_a_zygote_that_closed_its_channel_is_gone(pair):
    zygote, theirs, fds = pair
    theirs.close()
    with pytest.raises(ZygoteGone):
        zygote.spawn(fds, first=0, budget=10, seconds=5)
    assert zygote.wait(4343, 0.01) == (-1, 0.0)


def test_a_fork_that_failed_is_said(pair):
    zygote, theirs, fds = pair
    answer(theirs, id=1, pid=None, error="[Errno 11] Resource temporarily unavailable")
    with pytest.raises(ZygoteGone, match=r"could not fork.*Resource"):
        zygote.spawn(fds, first=0, budget=10, seconds=5)


def test_a_world_that_could_not_be_made_is_unavailable_never_the_jobs_fault(pair):
    """Issue 29: a world per job. Refused before the fork, the spawn says so; a process that
    could not settle in its world never ran the job: its exit says so, and the zygote is
    not used again (it ends itself; the sandbox retires)."""
    zygote, theirs, fds = pair
    answer(theirs, id=1, pid=None, error="cannot make the job's namespaces", unavailable=True)
    with pytest.raises(ZygoteGone, match="no world") as refused:
        zygote.spawn(fds, first=0, budget=10, seconds=5)
    assert refused.value.unavailable and not zygote.alive()

    zygote = Zygote(pid=os.getpid(), channel=zygote.channel)  # a new handle on the pair
    answer(theirs, id=1, pid=4343)
    pid = zygote.spawn(fds, first=0, budget=10, seconds=5)
    answer(theirs, id=1, exited=pid, status=70 << 8, cpu=0.0, unavailable=True, error="settle")
    assert zygote.wait(pid, 5) == (70 << 8, 0.0)
    assert "no world" in zygote.refused and zygote.dead


def test_a_zygote_stopped_after_the_last_sigcont_is_resumed_while_the_supervisor_waits(pair):
    """A job can SIGSTOP the zygote at any moment, also just after the supervisor's SIGCONT
    and before the zygote answers; the wait must undo it again, not sit out its deadline (a
    stopper's run once hit its 300 s wall clock on a loaded machine)."""
    import signal
    import subprocess
    import sys

    zygote, theirs, fds = pair
    stand_in = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import socket, json\n"
            f"s = socket.socket(fileno={theirs.fileno()})\n"
            "data, fds, _, _ = socket.recv_fds(s, 256, 4)\n"
            "s.send(json.dumps({'id': json.loads(data)['id'], 'pid': 4343}).encode())\n",
        ],
        pass_fds=[theirs.fileno()],
    )
    try:
        zygote.pid = stand_in.pid
        resumes: list[int] = []
        real_resume = Zygote.resume

        def resume_then_stopped_once(self):
            real_resume(self)
            if not resumes:  # the job's SIGSTOP lands right after the first SIGCONT
                os.kill(self.pid, signal.SIGSTOP)
            resumes.append(1)

        zygote.resume = resume_then_stopped_once.__get__(zygote)
        assert zygote.spawn(fds, first=0, budget=10, seconds=30) == 4343
        assert len(resumes) >= 2
    finally:
        os.kill(stand_in.pid, signal.SIGCONT)
        stand_in.wait(timeout=60)
