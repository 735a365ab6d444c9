"""The Trio server: lobby, tables, seat tokens, timers, server-side bots, spectators, chat.

``Server(config).serve()`` runs it; ``tongits-server`` (``cli.main``) is the command. A table's
state is a replay of its log (``table.TableLogState``), written through a ``journal.Journal``.
"""

from .app import Server
from .config import ServerConfig
from .storage.journal import Journal, MemoryJournal, NullJournal
from .table.table import TableLogState

__all__ = ["Journal", "MemoryJournal", "NullJournal", "Server", "ServerConfig", "TableLogState"]
