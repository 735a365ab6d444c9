"""What the browser seat costs: server CPU per action over WebSocket against TCP text mode, the
page's total transfer, and its first paint in Chromium.

A real ``tongits-server`` runs in a child process (``--db :memory:``, no bot delay, no timer).

(a) CPU per action: T tables, each one client playing the first of its ``legal`` moves at once
    and two server bots, for H hands; once with every client speaking text mode over TCP and
    once over a WebSocket (the same JSON, one message per frame), alternating R rounds. The
    server's CPU time (user + system, from /proc) divided by the actions played; the ratio
    WebSocket / TCP is the figure (the issue's bound: at most 1.3).
(b) The page's transfer: every byte of the answers to ``/`` and the files it loads (its
    script, style, icon, manifest and phrasebook), headers included, as a browser loads it:
    gzip-compressed (bound: 60 KB) and, beside it, plain.
(c) First paint: Chromium (headless, loopback) loads the page N times in fresh tabs; the
    median and worst ``first-contentful-paint`` of the Paint Timing API (bound: 1 s). Skipped
    when Chromium or Selenium is missing.

    python bench/web.py                     # 30 tables x 5 hands, 3 rounds, 10 page loads
    python bench/web.py --tables 30 --hands 4 --rounds 5

The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from line_client import LineClient  # noqa: E402
from web_support import WebSocketClient  # noqa: E402

PAGE = ("/", "/app.js", "/style.css", "/icon.svg", "/manifest.webmanifest", "/phrases.json")


def start_server(data_dir: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tongits.server.cli", "--port", "0", "--db", ":memory:",
         "--data-dir", data_dir, "--bot-delay", "0", "--timer", "0", "--discovery", "false",
         "--log-level", "WARNING", "--max-tables-per-address", "1000"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert process.stdout is not None
    match = re.match(r"listening on [\d.]+:(\d+)", process.stdout.readline())
    assert match, "the server did not start"
    return process, int(match.group(1))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def play_table(port: int, websocket: bool, hands: int, counts: list[int]) -> None:
    """One client at a table of two server bots, playing ``hands`` hands; adds the actions it
    saw (every seat's) to ``counts``."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    client: LineClient | WebSocketClient
    if websocket:
        client = await WebSocketClient.open(stream, host=f"127.0.0.1:{port}",
                                            origin=f"http://127.0.0.1:{port}")
    else:
        client = LineClient(stream)
    await client.send({"type": "hello", "version": 1, "name": "bench", "kind": "bot",
                       "auto_next": True})
    await client.send({"type": "create_table", "name": "bench", "bots": 2, "timer": 0,
                       "hands": hands})
    actions = 0
    while (msg := await client.receive()) is not None:
        kind = msg["type"]
        if kind == "state":
            if "event" in msg:
                actions += 1
            if msg.get("legal"):
                await client.send({"type": "move", "move": msg["legal"][0]})
        elif kind == "match_over":
            break
    counts.append(actions)
    await stream.aclose()


async def one_round(pid: int, port: int, websocket: bool, tables: int,
                    hands: int) -> tuple[float, int]:
    counts: list[int] = []
    before = cpu_seconds(pid)
    async with trio.open_nursery() as nursery:
        for _ in range(tables):
            nursery.start_soon(play_table, port, websocket, hands, counts)
    return cpu_seconds(pid) - before, sum(counts)


async def page_bytes(port: int, compressed: bool) -> dict[str, int]:
    """The bytes of each answer, headers included (``compressed``: as a browser that accepts
    gzip gets it)."""
    sizes = {}
    accept = "Accept-Encoding: gzip, deflate, br\r\n" if compressed else ""
    for path in PAGE:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        await stream.send_all(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{accept}"
                              "Connection: close\r\n\r\n".encode())
        data = b""
        while chunk := await stream.receive_some(65536):
            data += chunk
        assert data.startswith(b"HTTP/1.1 200"), data[:40]
        sizes[path] = len(data)
    return sizes


def first_paint(port: int, loads: int) -> list[float] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    try:
        from selenium.webdriver import ChromeOptions
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.chrome.webdriver import WebDriver
    except ImportError:
        return None
    if browser is None or driver_path is None:
        return None
    options = ChromeOptions()
    options.binary_location = browser
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--window-size=1280,800"):
        options.add_argument(argument)
    driver = WebDriver(options=options, service=Service(driver_path))
    paints = []
    try:
        driver.get(f"http://127.0.0.1:{port}/icon.svg")  # the browser's own start-up aside
        for _ in range(loads):
            driver.switch_to.new_window("tab")
            driver.get(f"http://127.0.0.1:{port}/")
            paint = None
            for _ in range(100):  # the entry is recorded a moment after the load event
                paint = driver.execute_script(
                    "const e = performance.getEntriesByName('first-contentful-paint');"
                    "return e.length ? e[0].startTime : null;")
                if paint is not None:
                    paints.append(float(paint) / 1000)
                    break
                time.sleep(0.02)
    finally:
        driver.quit()
    return paints


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as data_dir:
        process, port = start_server(data_dir)
        try:
            await one_round(process.pid, port, False, 2, 1)  # warm up both paths
            await one_round(process.pid, port, True, 2, 1)
            per_action: dict[str, list[float]] = {"tcp": [], "ws": []}
            for _ in range(args.rounds):
                for mode in ("tcp", "ws"):
                    cpu, actions = await one_round(process.pid, port, mode == "ws",
                                                   args.tables, args.hands)
                    per_action[mode].append(cpu / actions * 1e6)
                    print(f"{mode:>3}: {actions} actions, server CPU {cpu:.2f} s, "
                          f"{cpu / actions * 1e6:.1f} µs an action", flush=True)
            sizes = await page_bytes(port, True)
            plain = await page_bytes(port, False)
            paints = await trio.to_thread.run_sync(first_paint, port, args.loads)
        finally:
            process.terminate()
            process.wait()
    tcp, ws = statistics.median(per_action["tcp"]), statistics.median(per_action["ws"])
    figures: dict[str, Any] = {
        "tables": args.tables, "hands": args.hands, "rounds": args.rounds,
        "cpu_us_per_action_tcp_text": round(tcp, 1),
        "cpu_us_per_action_websocket": round(ws, 1),
        "websocket_over_tcp": round(ws / tcp, 3),
        "page_bytes_gzip": sizes, "page_total_bytes_gzip": sum(sizes.values()),
        "page_total_bytes_plain": sum(plain.values()),
    }
    print(f"server CPU an action: TCP text {tcp:.1f} µs, WebSocket {ws:.1f} µs "
          f"(ratio {ws / tcp:.2f}, medians of {args.rounds})")
    print(f"page transfer, gzip: {sum(sizes.values())} bytes "
          + ", ".join(f"{p} {n}" for p, n in sizes.items())
          + f" (plain: {sum(plain.values())} bytes)")
    if paints:
        figures["first_paint_median_s"] = round(statistics.median(paints), 3)
        figures["first_paint_max_s"] = round(max(paints), 3)
        print(f"first contentful paint: median {statistics.median(paints) * 1000:.0f} ms, "
              f"worst {max(paints) * 1000:.0f} ms ({len(paints)} loads)")
    else:
        print("first paint: no Chromium + chromedriver + selenium here, not measured")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=30)
    parser.add_argument("--hands", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--loads", type=int, default=10, help="page loads for the first paint")
    args = parser.parse_args()
    print(json.dumps(trio.run(measure, args)))


if __name__ == "__main__":
    main()
