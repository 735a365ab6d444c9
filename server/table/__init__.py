"""A table: the task that owns one table's state, and its parts.

``actor`` (the ``Table`` task), ``table`` (its state as a replay of its log), ``entries`` (the
log's entries), ``ledger`` (the only way the state changes), ``seating``, ``progression``,
``dealing`` (what differs between kinds of tables; ``arena`` the arena's), ``audience`` and
``fanout`` (who hears what), ``clock``, ``bots`` (server-side bots), ``requests`` (what a
connection hands a table).

May import: the engine and the protocol; of the server, ``config``, ``errors``, ``threads``,
``net.peer`` (the connections it talks to), ``storage`` (the journal its ledger commits to);
``lobby`` for types only (the arena's table is opened through it).
"""
