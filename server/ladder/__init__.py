"""The rated ladder: accounts, ratings, the queue and its matches.

``ladder`` (accounts and Plackett-Luce ratings), ``matchmaker`` (the queue, and the tables it
opens), ``ladder_dealing`` (a ladder match's table: forfeits, rating at the end),
``ladder_requests`` (the ladder's entries of the route table).

May import: the engine and the protocol; of the server, ``config``, ``lobby``, ``routes``,
``threads``, ``net.peer`` and the ``table`` package (a ladder table is a table with a dealing
of its own).
"""
