"""The garbage collector on the server's schedule, and its two settings."""

from __future__ import annotations

import gc
import socket
from pathlib import Path

import pytest
import trio
import trio.testing
from server_support import TIME_CAP, play_hands, quick_config, tcp_connect
from tongits.server import Server, ServerConfig
from tongits.server.cli import load_config, main
from tongits.server.collector import BURST_THRESHOLD, Collector, cyclic_garbage
from tongits.server.storage.store import SQLiteJournal


async def test_young_collections_on_schedule_and_a_full_one_now_and_then(
    monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    """While the loop is busy (here a task that wakes every 10 ms), a young collection runs
    every ``young_every``, in the loop's own rounds, beside the full ones."""
    calls: list[tuple[float, int]] = []

    def collect(generation: int = 2) -> int:
        calls.append((trio.current_time(), generation))
        return 0

    async def cycles_found() -> int:
        return 1

    async def busy() -> None:
        for _ in range(1000):
            await trio.sleep(0.01)

    monkeypatch.setattr(gc, "collect", collect)
    collector = Collector(young_every=0.05, full_every=1.0, check=cycles_found)
    with trio.move_on_after(2.01):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(busy)
            await collector.run()
    young = [t for t, g in calls if g == 0]
    full = [t for t, g in calls if g == 2]
    assert len(full) == 2 and full[0] == pytest.approx(1.0, abs=0.051)
    assert full[1] - full[0] == pytest.approx(1.0, abs=0.051)
    assert 36 <= len(young) <= 40  # every 50 ms, give or take the 10 ms between rounds
    gaps = [b - a for a, b in zip(young, young[1:], strict=False)]
    assert min(gaps) >= 0.05 - 1e-9 and max(gaps) <= 0.06 + 1e-9


async def test_a_loop_with_nothing_to_do_is_not_woken_to_collect(
    monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    """A server nobody uses made nothing to collect: its loop sleeps until the next full
    collection instead of waking twenty times a second for young ones (each wake-up of an
    idle process costs it CPU)."""
    young: list[float] = []

    def collect(generation: int = 2) -> int:
        if generation == 0:
            young.append(trio.current_time())
        return 0

    async def nothing_to_free() -> int:
        return 0

    monkeypatch.setattr(gc, "collect", collect)
    with trio.move_on_after(3.01):
        await Collector(young_every=0.05, full_every=1.0, check=nothing_to_free).run()
    assert len(young) <= 3  # one in a round of each full collection's check, at most


async def test_a_full_collection_is_skipped_when_a_copy_of_the_heap_holds_no_cycle(
    monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    generations: list[int] = []
    answers = iter([0, 5, -1, 0])

    def collect(generation: int = 2) -> int:
        generations.append(generation)
        return 0

    async def check() -> int:
        return next(answers)

    monkeypatch.setattr(gc, "collect", collect)
    with trio.move_on_after(4.01):
        await Collector(young_every=0.05, full_every=1.0, check=check).run()
    # nothing to free, cycles, the copy could not tell, nothing: two full collections of four
    assert generations.count(2) == 2


async def test_the_copy_counts_what_a_full_collection_would_free() -> None:
    """``cyclic_garbage`` counts in a forked copy, leaving this process's garbage where it is."""
    gc.collect()
    rings: list[list[object]] = [[] for _ in range(1000)]
    for ring in rings:
        ring.append(ring)
    del rings, ring
    assert await cyclic_garbage() >= 1000
    assert gc.collect() >= 1000  # still here to free: the copy only counted
    assert await cyclic_garbage() < 1000


def test_install_freezes_what_exists_and_leaves_old_generations_to_the_schedule() -> None:
    before = gc.get_threshold()
    try:
        Collector(0.05, 600.0).install()
        young, middle, old = gc.get_threshold()
        assert young == BURST_THRESHOLD and middle > 10**8 and old > 10**8
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_collection_intervals_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Collector(0.0, 600.0)
    with pytest.raises(ValueError, match="gc_full"):
        ServerConfig.from_mapping({"gc_full": 0})
    config = load_config(["--gc-young", "0.2", "--gc-full", "3600"])
    assert (config.gc_young, config.gc_full) == (0.2, 3600.0)


def test_an_unknown_bot_policy_is_refused_at_start(capsys: pytest.CaptureFixture[str]) -> None:
    """``--bot-policy stronger`` started a server on which every table seating a server bot
    (``create_table`` with ``bots``, a stand-in for a dropped player) failed: ``table_failed``
    and a traceback in the log. The typo is now said at once, and the server does not start."""
    with pytest.raises(ValueError, match="bot_policy must be one of .*strong"):
        ServerConfig.from_mapping({"bot_policy": "stronger"})
    assert main(["--bot-policy", "stronger", "--db", ":memory:"]) == 2
    assert "bot_policy must be one of expert, greedy, random, strong, not 'stronger'" in (
        capsys.readouterr().err)
    assert load_config(["--bot-policy", "expert"]).bot_policy == "expert"


def test_a_taken_port_is_one_clear_line_and_exit_status_1(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Trio's nurseries wrap the error in exception groups; the host still reads one line."""
    before = gc.get_threshold()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        try:
            status = main(["--port", str(port), "--db", str(tmp_path / "x.db"),
                           "--discovery", "false"])
        finally:
            gc.unfreeze()
            gc.set_threshold(*before)
    assert status == 1
    assert "cannot serve: [Errno" in caplog.text and "in use" in caplog.text


#: The packages whose objects a serving process makes: the server's, the wire's, the rules'.
SERVER_SIDE = ("tongits.server", "tongits.protocol", "tongits.engine")


async def test_a_server_playing_hands_leaves_no_cycle_of_its_objects_behind() -> None:
    """The schedule above collects old objects rarely: what the server, the protocol and the
    engine make for a hand (its views, encodings, journal entries) must be freed by reference
    counting. A cycle per hand piled up there until the next full collection (seen: the views
    of each hand, ~20 KB a hand on a busy server). The client's objects are not counted."""
    server = Server(quick_config(), SQLiteJournal(":memory:"))
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        with trio.fail_after(TIME_CAP):
            async with trio.open_nursery() as nursery:
                listeners = await nursery.start(server.serve)
                port = listeners[0].socket.getsockname()[1]
                async with tcp_connect(port, "Ana") as ana:
                    await ana.create_table("Cycles", bots=2, timer=0)
                    await play_hands(ana, 3)
                    gc.collect()  # while everything still runs: no shutdown in the count
                    ours = sorted({type(o).__qualname__ for o in gc.garbage
                                   if type(o).__module__.startswith(SERVER_SIDE)})
                    assert ours == []
                nursery.cancel_scope.cancel()
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
