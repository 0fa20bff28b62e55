"""A loopback stand-in for the few Daytona HTTP endpoints the ``daytona`` SDK calls for us.

This is NOT Daytona. It lets the tests drive the real SDK code path (``AsyncDaytona``, its
generated API clients, the toolbox proxy, multipart upload, the session API) end to end: a
"sandbox" is a folder whose ``tmp`` (mode 1777, root's) is the sandbox's ``/tmp``, and a
session command runs as a local subprocess in a bubblewrap PID namespace
(``--unshare-pid --die-with-parent``), so everything a job starts ends with it. Only the
fields the SDK reads are answered.

Like Daytona's toolbox, it runs every command **as root**, whatever ``os_user`` the sandbox
was created with: a command that does not drop privileges itself runs as root. So it needs
a root test process (:data:`RUNS_AS_ROOT`); the files the toolbox uploads are root's too.

Faults to inject (``StandIn.faults``): the create call fails; the exit code never appears;
the exit code is not an integer; the delete fails; a poll stalls (the connection is held
past the client's bound, as a dropped connection looks) or answers 502.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse

from tests.support.paths import runtime_folders_in_tmp

# Daytona's toolbox runs commands as root; so does the stand-in, which can only when the test
# process is root (it maps no other user).
RUNS_AS_ROOT = os.geteuid() == 0


@dataclass
class Faults:
    create_fails: int = 0  # the next n creates answer 500
    delete_fails: int = 0  # the next n deletes answer 500
    exit_code: str = "normal"  # "never" (null forever), "missing" (no field), "garbage"
    poll_stalls: int = 0  # the next n polls hang for stall_seconds
    poll_errors: int = 0  # the next n polls answer 502
    stall_seconds: float = 3.0


@dataclass
class Command:
    id: str
    command: str
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path


@dataclass
class Box:
    id: str
    dto: dict[str, Any]
    root: Path
    created: dict[str, Any]  # the create request as the SDK sent it
    commands: dict[str, Command] = field(default_factory=dict)
    sessions: set[str] = field(default_factory=set)


class StandIn:
    def __init__(self) -> None:
        self.faults = Faults()
        self.boxes: dict[str, Box] = {}
        self.deleted: list[str] = []
        self.created_bodies: list[dict[str, Any]] = []  # create requests as the SDK sent them
        self.polls = 0
        self._lock = threading.Lock()
        self._folder = Path(tempfile.mkdtemp(prefix="daytona-standin-"))
        self.app = self._make_app()
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._server = uvicorn.Server(
            uvicorn.Config(self.app, log_level="error", lifespan="off", ws="none")
        )
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def __enter__(self) -> StandIn:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for box in list(self.boxes.values()):
            self._destroy(box)
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def live(self) -> list[str]:
        """Names of the sandboxes not deleted."""
        return [box.dto["name"] for box in self.boxes.values()]

    def running_commands(self) -> int:
        return sum(
            1
            for box in self.boxes.values()
            for command in box.commands.values()
            if command.process.poll() is None
        )

    # --- the app ----------------------------------------------------------------------

    def _box(self, key: str) -> Box:
        for box in self.boxes.values():
            if key in (box.id, box.dto["name"]):
                return box
        raise HTTPException(404, detail=f"sandbox {key} not found")

    def _destroy(self, box: Box) -> None:
        for command in box.commands.values():
            if command.process.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(command.process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                command.process.wait(timeout=10)
        shutil.rmtree(box.root, ignore_errors=True)
        self.boxes.pop(box.id, None)
        self.deleted.append(box.dto["name"])

    def _make_app(self) -> FastAPI:
        app = FastAPI()

        @app.exception_handler(HTTPException)
        async def error(_: Request, exc: HTTPException) -> JSONResponse:
            body = {"statusCode": exc.status_code, "message": str(exc.detail), "error": "x"}
            return JSONResponse(body, status_code=exc.status_code)

        @app.post("/sandbox")
        async def create(request: Request) -> dict[str, Any]:
            body = await request.json()
            self.created_bodies.append(body)
            if self.faults.create_fails > 0:
                self.faults.create_fails -= 1
                raise HTTPException(500, detail="the stand-in refuses to create")
            box_id = uuid.uuid4().hex
            root = self._folder / box_id
            (root / "tmp").mkdir(parents=True)
            (root / "tmp").chmod(0o1777)  # a sandbox's /tmp: every user may write there
            dto = {
                "id": box_id,
                "organizationId": "standin",
                "name": body.get("name") or box_id,
                "user": body.get("user") or "daytona",
                "env": body.get("env") or {},
                "labels": body.get("labels") or {},
                "public": False,
                "networkBlockAll": bool(body.get("networkBlockAll")),
                "kvm": False,
                "target": "standin",
                "cpu": body.get("cpu") or 1,
                "gpu": 0,
                "memory": body.get("memory") or 1,
                "disk": body.get("disk") or 1,
                "state": "started",
                "toolboxProxyUrl": f"{self.url}/toolbox",
                "autoStopInterval": body.get("autoStopInterval"),
                "autoDeleteInterval": body.get("autoDeleteInterval"),
            }
            self.boxes[box_id] = Box(box_id, dto, root, body)
            return dto

        @app.get("/sandbox")
        async def listing(labels: str | None = None) -> dict[str, Any]:
            wanted = json.loads(labels) if labels else {}
            items = [
                box.dto
                for box in self.boxes.values()
                if all(box.dto["labels"].get(k) == v for k, v in wanted.items())
            ]
            return {"items": items, "nextCursor": None}

        @app.get("/sandbox/{key}")
        async def get(key: str) -> dict[str, Any]:
            return self._box(key).dto

        @app.delete("/sandbox/{key}")
        async def delete(key: str) -> dict[str, Any]:
            box = self._box(key)
            if self.faults.delete_fails > 0:
                self.faults.delete_fails -= 1
                raise HTTPException(500, detail="the stand-in refuses to delete")
            self._destroy(box)
            return {**box.dto, "state": "destroyed"}

        @app.post("/toolbox/{key}/files/bulk-upload")
        async def upload(key: str, request: Request) -> dict[str, Any]:
            box = self._box(key)
            form = await request.form()
            for name, value in form.multi_items():
                if name.endswith(".file"):
                    path = str(form[name.removesuffix(".file") + ".path"])
                    if not path.startswith("/tmp/"):
                        raise HTTPException(400, detail="the stand-in writes only under /tmp")
                    target = box.root / path.lstrip("/")
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(await value.read())  # type: ignore[union-attr]
            return {}

        @app.post("/toolbox/{key}/process/session")
        async def session(key: str, request: Request) -> dict[str, Any]:
            self._box(key).sessions.add((await request.json())["sessionId"])
            return {}

        @app.delete("/toolbox/{key}/process/session/{sid}")
        async def end_session(key: str, sid: str) -> dict[str, Any]:
            self._box(key).sessions.discard(sid)
            return {}

        @app.post("/toolbox/{key}/process/session/{sid}/exec")
        async def execute(key: str, sid: str, request: Request) -> dict[str, Any]:
            box = self._box(key)
            body = await request.json()
            if sid not in box.sessions:
                raise HTTPException(404, detail="no such session")
            command_id = uuid.uuid4().hex
            out, err = box.root / f"{command_id}.out", box.root / f"{command_id}.err"
            with out.open("wb") as stdout, err.open("wb") as stderr:
                # As root, as Daytona does (this process is root: RUNS_AS_ROOT), whatever
                # the sandbox's user: only a command that drops privileges runs as another.
                process = subprocess.Popen(
                    [
                        *("bwrap", "--dev-bind", "/", "/", "--bind", str(box.root / "tmp"), "/tmp"),
                        *_runtime_under_tmp(),
                        *("--unshare-pid", "--proc", "/proc", "--die-with-parent"),
                        *("sh", "-c", body["command"]),
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    start_new_session=True,
                )
            box.commands[command_id] = Command(command_id, body["command"], process, out, err)
            return {"cmdId": command_id}

        @app.get("/toolbox/{key}/process/session/{sid}/command/{cid}")
        async def command(key: str, sid: str, cid: str) -> dict[str, Any]:
            import asyncio

            self.polls += 1
            if self.faults.poll_stalls > 0:
                self.faults.poll_stalls -= 1
                await asyncio.sleep(self.faults.stall_seconds)
            if self.faults.poll_errors > 0:
                self.faults.poll_errors -= 1
                raise HTTPException(502, detail="bad gateway")
            found = self._box(key).commands.get(cid)
            if found is None:
                raise HTTPException(404, detail="no such command")
            code: Any = found.process.poll()
            if self.faults.exit_code == "never":
                code = None
            elif self.faults.exit_code == "garbage" and code is not None:
                code = "zero"
            if self.faults.exit_code == "missing":
                return {"id": cid, "command": found.command}
            return {"id": cid, "command": found.command, "exitCode": code}

        @app.get("/toolbox/{key}/process/session/{sid}/command/{cid}/logs")
        async def logs(key: str, sid: str, cid: str) -> dict[str, Any]:
            found = self._box(key).commands.get(cid)
            if found is None:
                raise HTTPException(404, detail="no such command")
            stdout = found.stdout.read_bytes().decode("utf-8", "replace")
            stderr = found.stderr.read_bytes().decode("utf-8", "replace")
            return {"output": stdout + stderr, "stdout": stdout, "stderr": stderr}

        return app


def _runtime_under_tmp() -> list[str]:
    """The sandbox's own /tmp hides a checkout or venv kept under the host's /tmp (a clone
    made there): bind back, read-only, the folder of /tmp that holds each, with its own
    mode (a mount point made inside the sandbox's /tmp would be root's alone)."""
    binds: list[str] = []
    for top in sorted(runtime_folders_in_tmp()):
        binds += ["--ro-bind", top, top]
    return binds
