"""A table: the task that owns one table's state, and its parts.

``actor`` (the ``Table`` task), ``table`` (its state as a replay of its log), ``entries`` (the
log's entries), ``ledger`` (the only way the state changes), ``parts`` (what the parts share,
given to each when it is made), ``seating``, ``progression``, ``dealing`` (what differs between
kinds of tables, and a lobby table's; ``arena`` the arena's), ``audience`` and ``fanout`` (who
hears what), ``clock``, ``bots`` (server-side bots), ``requests`` (what a connection hands a
table).

May import: the engine and the protocol; of the server, ``config``, ``errors``, ``threads``,
``pace`` (an address's pace of chat lines), ``names`` (names that look alike), ``net.peer``
(the connections it talks to), ``storage`` (the journal its ledger commits to);
``lobby`` for types only (the arena's table is opened through it).
"""
