"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: JSON
messages ending in NUL on file descriptors 3 and 4), with the standard library only: open a
page at a window size, evaluate JavaScript, take a screenshot, click where a person would.

`chromium()` is the browser's path; where there is none the caller skips, except under CI
(`CI` set), where the browser tests must run and its absence is a failure (the README's test
command installs Debian's chromium where apt-get is at hand)."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--remote-debugging-pipe")


def chromium() -> str:
    """The browser's path. Without one the browser tests fail, unless ATTNSVM_SKIP_BROWSER=1 says
    to skip them (an explicit choice, never a silent one)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        why = "headless Chromium is not installed (Debian: apt-get install chromium)"
        if os.environ.get("ATTNSVM_SKIP_BROWSER") != "1":
            pytest.fail(f"{why}; set ATTNSVM_SKIP_BROWSER=1 to skip the browser tests")
        pytest.skip(why)
    return path


def _above(fd: int, low: int = 10) -> int:
    """`fd` moved to a descriptor number of at least `low`."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, low)
    os.close(fd)
    return moved


class Page:
    """One browser tab at a fixed window size."""

    def __init__(self, width: int, height: int, timeout: float = 60.0):
        self.timeout, self.events, self._id, self._buf = timeout, [], 0, b""
        self._home = tempfile.TemporaryDirectory(prefix="attnsvm-chromium-")
        to_browser, from_browser = os.pipe(), os.pipe()
        # never 3 or 4 themselves: the shell moves them there
        theirs = [_above(to_browser[0]), _above(from_browser[1])]
        self.proc = subprocess.Popen(
            # (dash: fds < 10 only)
            ["bash", "-c", f'exec "$0" "$@" 3<&{theirs[0]} 4>&{theirs[1]}', chromium(), *FLAGS,
             f"--user-data-dir={self._home.name}", f"--window-size={width},{height}", "about:blank"],
            pass_fds=theirs, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in theirs:
            os.close(fd)
        self._out, self._in = to_browser[1], from_browser[0]
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False,
                  session=True)
        self.send("Page.enable", session=True)

    def send(self, method: str, session: bool = False, **params):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._out, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._next()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def _next(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buf:
            ready, _, _ = select.select([self._in], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(self._in, 1 << 16) if ready else b""
            if not chunk:
                raise TimeoutError("Chromium did not answer" if not ready else "Chromium closed its pipe")
            self._buf += chunk
        msg, _, self._buf = self._buf.partition(b"\0")
        return json.loads(msg)

    def wait_for(self, event: str) -> dict:
        """The first event of this name (already received or the next to come)."""
        while True:
            for k, e in enumerate(self.events):
                if e.get("method") == event:
                    return self.events.pop(k)
            self.events.append(self._next())

    def open(self, url: str) -> None:
        self.events.clear()
        self.send("Page.navigate", url=url, session=True)
        self.wait_for("Page.loadEventFired")

    def js(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-serialisable)."""
        res = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True, session=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expression[:60]}...: {res['exceptionDetails']}")
        return res["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png", session=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def mouse(self, kind: str, x: float, y: float, buttons: int = 0) -> None:
        self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y,
                  button="left" if kind != "mouseMoved" or buttons else "none",
                  buttons=buttons, clickCount=1 if kind != "mouseMoved" else 0, session=True)

    def click(self, x: float, y: float) -> None:
        """A person's click: the pointer moves there, presses and releases the left button."""
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, buttons=1)
        self.mouse("mouseReleased", x, y)

    def drag(self, start: tuple[float, float], end: tuple[float, float], steps: int = 8) -> None:
        self.mouse("mouseMoved", *start)
        self.mouse("mousePressed", *start, buttons=1)
        for k in range(1, steps + 1):
            self.mouse("mouseMoved", start[0] + (end[0] - start[0]) * k / steps,
                       start[1] + (end[1] - start[1]) * k / steps, buttons=1)
        self.mouse("mouseReleased", *end)

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._out)
        os.close(self._in)
        self._home.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
