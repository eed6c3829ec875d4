"""Open exported pages in a real browser (headless Chromium) and check what a reader would see.

Driven over the Chrome DevTools Protocol (the browser's own remote
debugging websocket, through `websocket-client`), so nothing but Debian's
`chromium` package is needed. For each page:

- console errors and uncaught exceptions are collected;
- every figure must have loaded: each <img> complete with a non-zero
  natural size, each inline <svg> laid out with a non-zero box;
- each interactive flame graph is clicked like a mouse would (a narrow frame
  near the top, by coordinates) and must zoom: the frame then spans the
  graph's width and "Reset zoom" appears;
- a full-page screenshot is saved.

Nothing here installs anything: `find_chromium` returns None when Chromium
is missing, and callers say so.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser")
# The flags that work on this kind of machine (root in a container, no GPU, no network to Google).
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
)  # fmt: skip
# Time limits that only stop a hung browser; nothing is judged by how long anything took.
START_TIMEOUT_S = 60
PAGE_TIMEOUT_S = 120
WINDOW = (1400, 1800)

_FIGURES_SCRIPT = """(() => {
  const images = [...document.images].map(i => ({src: i.src.slice(0, 80), complete: i.complete,
                                               width: i.naturalWidth, height: i.naturalHeight}));
  const svgs = [...document.querySelectorAll("svg")].filter(s => !s.parentElement.closest("svg")).map(s => {
    const box = s.getBoundingClientRect();
    return {id: s.id || "", width: box.width, height: box.height, flame: s.classList.contains("loadlab-flamegraph")};
  });
  return JSON.stringify({images, svgs});
})()"""

# Picks a frame to click in flame graph number __INDEX__: the narrowest frame still wide enough to hit,
# below the root, and returns where it is on the page (scrolled into view first).
_PICK_FRAME_SCRIPT = """(() => {
  const svg = document.querySelectorAll("svg.loadlab-flamegraph")[__INDEX__];
  const frames = [...svg.querySelectorAll("g.frame")].filter(g => parseFloat(g.getAttribute("data-depth")) >= 1);
  const candidates = frames.map(g => [g, g.querySelector("rect").getBoundingClientRect()])
                           .filter(([g, r]) => r.width >= 12 && r.width < 0.8 * svg.getBoundingClientRect().width);
  if (!candidates.length) return JSON.stringify(null);
  candidates.sort((a, b) => a[1].width - b[1].width);
  const [frame] = candidates[Math.floor(candidates.length / 2)];
  frame.scrollIntoView({block: "center"});
  const rect = frame.querySelector("rect").getBoundingClientRect();
  frame.setAttribute("data-loadlab-clicked", "1");
  return JSON.stringify({x: rect.x + rect.width / 2, y: rect.y + rect.height / 2, width: rect.width,
                         name: frame.getAttribute("data-name")});
})()"""

_ZOOMED_SCRIPT = """(() => {
  const svg = document.querySelectorAll("svg.loadlab-flamegraph")[__INDEX__];
  const frame = svg.querySelector("g.frame[data-loadlab-clicked]");
  const rect = frame.querySelector("rect");
  return JSON.stringify({width: parseFloat(rect.getAttribute("width")),
                         graph: parseFloat(svg.getAttribute("width")),
                         reset_shown: !svg.querySelector(".reset").classList.contains("hide")});
})()"""


def find_chromium() -> str | None:
    """The path of Debian's chromium, or None."""
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageCheck:
    """What the browser saw on one page."""

    page: str
    console_errors: list[str] = field(default_factory=list)
    images: int = 0
    broken_images: list[str] = field(default_factory=list)
    svgs: int = 0
    empty_svgs: list[str] = field(default_factory=list)
    flame_graphs: int = 0
    flame_zoom_failures: list[str] = field(default_factory=list)
    screenshot: Path | None = None
    # Claim tables that run past the window's right edge: a reader would have to scroll sideways to their
    # "reproduce" and "data" columns.
    tables_wider_than_window: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return ([f"console: {e}" for e in self.console_errors] + [f"image not loaded: {i}" for i in self.broken_images]
                + [f"svg with no size: {s}" for s in self.empty_svgs]
                + [f"flame graph did not zoom: {f}" for f in self.flame_zoom_failures]
                + [f"claim table wider than the window: {t}" for t in self.tables_wider_than_window])  # fmt: skip


class DevToolsError(RuntimeError):
    """The browser answered a command with an error, or stopped answering."""


class Chromium:
    """A headless Chromium with one page, driven over its DevTools websocket. Use as a context manager."""

    def __init__(self, executable: str):
        self.executable = executable
        self._ids = itertools.count(1)
        self.events: list[dict] = []

    def __enter__(self) -> Chromium:
        import websocket  # websocket-client, pinned in env/requirements.txt

        self._profile = tempfile.mkdtemp(prefix="loadlab-chromium-")
        self._process = subprocess.Popen(
            [self.executable, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile}", "--remote-debugging-port=0",
             f"--window-size={WINDOW[0]},{WINDOW[1]}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        port = self._wait_for_port()
        # No proxy: the browser listens on loopback, and a proxy from the environment must not see it.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        targets = json.loads(opener.open(f"http://127.0.0.1:{port}/json/list", timeout=START_TIMEOUT_S).read())
        page = next(t for t in targets if t.get("type") == "page")
        self._socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=PAGE_TIMEOUT_S,
                                                   suppress_origin=True)  # fmt: skip
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        return self

    def _wait_for_port(self) -> int:
        # Chromium writes the port it picked into the profile once DevTools listens.
        marker = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise DevToolsError(f"{self.executable} exited with {self._process.returncode} before DevTools listened")
            if marker.exists() and marker.read_text().strip():
                return int(marker.read_text().split()[0])
            time.sleep(0.1)
        raise DevToolsError(f"{self.executable} did not open its DevTools port in {START_TIMEOUT_S} s")

    def __exit__(self, *exc_info) -> None:
        try:
            self._socket.close()
        except Exception:  # noqa: BLE001  (closing a socket that may already be gone)
            pass
        self._process.terminate()
        try:
            self._process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    def send(self, method: str, **params) -> dict:
        """Send one DevTools command and return its result; events that arrive meanwhile are kept."""
        identifier = next(self._ids)
        self._socket.send(json.dumps({"id": identifier, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv())
            if message.get("id") == identifier:
                if "error" in message:
                    raise DevToolsError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for_event(self, method: str) -> dict:
        """The next event `method` (one already received counts)."""
        for index, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(index)
        while True:
            message = json.loads(self._socket.recv())
            if message.get("method") == method:
                return message
            self.events.append(message)

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise DevToolsError(f"script failed: {result['exceptionDetails'].get('text')}")
        return json.loads(result["result"]["value"])

    def click(self, x: float, y: float) -> None:
        """A real left click: the page sees mousedown, mouseup and click at (x, y)."""
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def console_errors(self) -> list[str]:
        """Errors the page logged or threw since the last call (the events are consumed)."""
        errors, kept = [], []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                errors.append(details.get("exception", {}).get("description") or details.get("text", "exception"))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                errors.append(f"{entry.get('text')} ({entry.get('url', '')})")
            else:
                kept.append(event)
        self.events = kept
        return errors

    def screenshot(self, path: Path) -> Path:
        """The whole page, not only the window, as PNG."""
        metrics = self.send("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True, clip=clip)["data"]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


_WIDE_TABLES_SCRIPT = """JSON.stringify(
Array.from(document.querySelectorAll('table.loadlab-claims'))
  .map((table, index) => ({index: index, right: table.getBoundingClientRect().right}))
  .filter(t => t.right > document.documentElement.clientWidth + 1)
  .map(t => `table ${t.index + 1} ends at ${Math.round(t.right)} px of ${document.documentElement.clientWidth}`))
"""


def check_page(browser: Chromium, page: Path, screenshot_dir: Path | None = None) -> PageCheck:
    """Load `page` and check it (see the module docstring); screenshot it into `screenshot_dir`."""
    page = Path(page).resolve()
    check = PageCheck(page.name)
    browser.events.clear()
    browser.send("Page.navigate", url=page.as_uri())
    browser.wait_for_event("Page.loadEventFired")
    figures = browser.evaluate(_FIGURES_SCRIPT)
    check.images = len(figures["images"])
    check.broken_images = [i["src"] for i in figures["images"] if not i["complete"] or not i["width"]]
    check.svgs = len(figures["svgs"])
    check.empty_svgs = [s["id"] or "svg" for s in figures["svgs"] if not (s["width"] and s["height"])]
    check.flame_graphs = sum(1 for s in figures["svgs"] if s["flame"])
    for index in range(check.flame_graphs):
        target = browser.evaluate(_PICK_FRAME_SCRIPT.replace("__INDEX__", str(index)))
        if target is None:
            check.flame_zoom_failures.append(f"graph {index + 1}: no frame below the root wide enough to click")
            continue
        browser.click(target["x"], target["y"])
        zoomed = browser.evaluate(_ZOOMED_SCRIPT.replace("__INDEX__", str(index)))
        # Zoomed: the frame spans the graph's usable width (all but the 10 px margins) and "Reset zoom" shows.
        if not (zoomed["width"] >= zoomed["graph"] - 21 and zoomed["reset_shown"]):
            check.flame_zoom_failures.append(f"graph {index + 1}: clicked {target['name']!r}, still {zoomed['width']:.0f} "
                                             f"of {zoomed['graph']:.0f} px wide, reset shown: {zoomed['reset_shown']}")  # fmt: skip
    check.tables_wider_than_window = browser.evaluate(_WIDE_TABLES_SCRIPT)
    check.console_errors = browser.console_errors()
    if screenshot_dir is not None:
        check.screenshot = browser.screenshot(Path(screenshot_dir) / f"{page.stem}.png")
    return check


def check_pages(pages: list[Path], screenshot_dir: Path | None = None, executable: str | None = None) -> list[PageCheck]:
    """Check every page in one browser; raises FileNotFoundError when there is no Chromium."""
    executable = executable or find_chromium()
    if executable is None:
        raise FileNotFoundError("no chromium on PATH (Debian: apt-get install chromium)")
    with Chromium(executable) as browser:
        return [check_page(browser, page, screenshot_dir) for page in pages]
