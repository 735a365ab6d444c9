"""``tongits arena``: any three bots on duplicate deals, on one machine or a Dask cluster.

``runner`` runs the arena (its docstring says how deals are duplicated and cut into chunks);
``specs`` reads the bots it is given, ``play`` plays deals in-process, ``host`` on a loopback
server of the arena's own (for external programs), ``cluster`` on Dask workers, and ``stats``
adds the hands up into standings; ``tournament`` plays every triple of more bots and rates them
(``--tournament``). One ``runner.ArenaCommand`` carries a command line's settings to either.
What a script needs is here.
"""

from .play import ArenaConfig
from .runner import Progress, play_chunk, run_arena

__all__ = ["ArenaConfig", "Progress", "play_chunk", "run_arena"]
