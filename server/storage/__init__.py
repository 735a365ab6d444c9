"""Where tables' logs go: the journal seam, the group commit, the SQLite store.

``journal`` (the seam, and the in-memory journals), ``commit`` (entries of many tables made
durable in one transaction before anyone hears of them), ``store`` (the SQLite journal, its
restore and export).

May import: the engine and the protocol; of the server, ``table.entries`` and ``table.table``
(the entries it stores and the state it restores) and ``net.peer`` for types (whose frames a
commit releases).
"""
