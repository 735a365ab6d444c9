"""The Trio server: lobby, tables, seat tokens, timers, server-side bots, spectators, chat.

``Server(config).serve()`` runs it; ``tongits-server`` (``cli.main``) is the command. A table's
state is a replay of its log (``table.table.TableLogState``), written through a
``storage.journal.Journal``.

The folders, each with what it may import in its own docstring:

* ``net/``: one connection from its first byte to its close (the connection room, the
  transport of TLS, browsers and the protocol, the page and the WebSocket, the password);
* ``table/``: a table's task and its parts (seats, the match, the dealing, the fan-out);
* ``storage/``: the journal seam, the group commit, the SQLite store;
* ``ladder/``: accounts and ratings, the matchmaker's queue and its tables.

Here, what joins them: ``app`` (the ``Server``, wiring the rooms together), ``handshake``
(``hello``), ``routes`` (the route table: each request to the lobby, the ladder or its table),
``lobby`` (the open tables), ``config``, ``errors`` (exceptions to ``error`` frames), ``names``,
``collector`` (the garbage collector's schedule), ``threads`` (the worker threads), ``admin``
(the host's Unix socket) and ``cli``.
"""

from .app import Server
from .config import ServerConfig
from .storage.journal import Journal, MemoryJournal, NullJournal
from .table.table import TableLogState

__all__ = ["Journal", "MemoryJournal", "NullJournal", "Server", "ServerConfig", "TableLogState"]
