"""A well-contained sandbox's probe report (GOOD) and the host facts (HOST) the doctor's
tests start from."""

from __future__ import annotations

from critpt_grader.sandbox.doctor import (
    HostFacts,
)

# What a well-contained sandbox showed (root grader, sandbox user 999, nested namespace).
GOOD = {
    "uid": 999,
    "gid": 995,
    "uid_map": "999 0 1",
    "gid_map": "995 0 1",
    "cap_eff": "0000000000000000",
    "seccomp": "2",
    "no_new_privs": "1",
    "executable": "/opt/critpt/bin/python",
    "usr_owner": 65534,
    "overflow_uid": 65534,
    "own_pid": 2,
    "proc_pids": "1,2",
    "pid1_cmdline": "critpt-job-init infinity",
    "inside": True,
    "open_core_pattern": "EACCES",
    "open_drop_caches": "EACCES",
    "open_sysrq_trigger": "absent",
    "open_pid1_oom_score_adj": "EACCES",
    "sys_present": False,
    "sys_entries": "",
    "home_entries": "",
    "shadow": "absent",
    "create_root": "EROFS",
    "create_etc": "EROFS",
    "create_dev": "EROFS",
    "create_root_home": "absent",
    "create_tmp": "created",
    "create_dev_shm": "created",
    "tmp_bytes": 64 << 20,
    "dev_shm_bytes": 64 << 20,
    "net_connect": "ENETUNREACH",
    "net_interfaces": "lo",
    "unshare_user": "EPERM",
    "pid1_setpriority": "EPERM",
    "pid1_prlimit": "EPERM",
    "pid1_setaffinity": "EPERM",
    "rlimit_nproc": 96365,
    "rlimit_as": 1536 << 20,
    "rlimit_cpu": 121,
}


HOST = HostFacts(
    euid=0,
    bwrap="/usr/bin/bwrap",
    bwrap_version="bubblewrap 0.8.0",
    setpriv="/usr/bin/setpriv",
    sandbox_user="critpt-sandbox",
    sandbox_user_exists=True,
    cgroup_mode="v2",
    containment="bwrap+cgroup+seccomp+user:critpt-sandbox",
    python="/opt/critpt/bin/python",
    python_public=True,
    nproc=96365,
    userns="allowed",
    require_strong=False,
    settings={"allow_weak_containment": False, "seccomp": True},
)
