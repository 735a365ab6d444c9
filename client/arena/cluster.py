"""``tongits arena --cluster``: the arena's chunks of deals as tasks of a Dask cluster.

Dask distributed (``pip install 'tongits[cluster]'``) does the scheduling, the transfers and the
fault tolerance: a task whose worker dies is run again elsewhere (up to Dask's
``distributed.scheduler.allowed-failures``, 3 by default), so a worker lost mid-run loses no
deal; ``standings`` then checks that every deal came back exactly once. Each task is
``arena.play_chunk`` on a range of deals (passed in, so that this module knows nothing of it);
it needs nothing but ``tongits`` installed on the worker (and, for ``py:`` bots, their module:
a ``py:FILE.py:factory`` file is shipped to the workers with ``Client.upload_file``).

``local:N`` starts a ``LocalCluster`` of N single-threaded worker processes on this machine
(no dashboard, the scheduler on a free loopback port) and stops it afterwards.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .play import ArenaConfig
from .stats import ChunkResult

#: Seconds to wait for a remote scheduler to answer.
CONNECT_TIMEOUT = "20s"


class ClusterError(RuntimeError):
    """The cluster cannot be used: Dask is not installed, the scheduler does not answer, or a
    chunk failed on every worker that tried it."""


def play_on_cluster(
    play_chunk: Callable[[ArenaConfig, int, int], ChunkResult],
    config: ArenaConfig,
    bounds: Callable[[int], list[tuple[int, int]]],
    address: str,
    advance: Callable[[int], None],
) -> list[ChunkResult]:
    """Run ``play_chunk(config, start, stop)`` for the chunks ``bounds(workers)`` on the cluster
    at ``address``; ``advance(deals)`` as each chunk comes back."""
    try:
        from dask.distributed import as_completed
    except ImportError:
        raise ClusterError(
            "--cluster needs Dask distributed: pip install 'tongits[cluster]'"
        ) from None

    with _client(address) as client:
        for spec in config.specs:
            if spec.source_file is not None:
                client.upload_file(str(spec.source_file))
        workers = max(1, sum(client.nthreads().values()))
        futures = [
            client.submit(play_chunk, config, start, stop, key=f"arena-chunk-{start}-{stop}")
            for start, stop in bounds(workers)
        ]
        chunks: list[ChunkResult] = []
        try:
            for future in as_completed(futures):
                chunk = future.result()
                chunks.append(chunk)
                advance(chunk.stop - chunk.start)
        except Exception as exc:  # noqa: BLE001 - a task that failed everywhere
            client.cancel(futures)
            raise ClusterError(f"a chunk of deals failed on the cluster: {exc}") from exc
        return chunks


@contextmanager
def _client(address: str) -> Iterator[Any]:
    from dask.distributed import Client, LocalCluster

    if address.startswith("local:"):
        count = address.removeprefix("local:")
        if not count.isdigit() or int(count) < 1:
            raise ClusterError(f"local:N needs a number of workers, not {count!r}")
        with LocalCluster(
            n_workers=int(count),
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster, Client(cluster) as client:
            yield client
        return
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {exc}") from exc
    with client:
        yield client
