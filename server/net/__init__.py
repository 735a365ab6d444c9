"""The network: one connection from its first byte to its close.

``connection`` (the connection room: limits, the reader and its timeouts), ``transport`` (TLS,
a browser or the protocol, told from the first bytes), ``peer`` (a connection's queue and
writer), ``web`` and ``websocket`` (browsers on the same port, the page in ``page/``), ``tls``
(the certificate), ``access`` (the server password), ``discovery`` (the LAN's UDP answer).

May import: the engine and the protocol; of the server, ``config``, ``errors``, ``pace`` (an
address's pace of new connections) and ``table.requests`` (what a connection hands a table).
Nothing here knows the lobby, the tables' parts, the ladder or the storage.
"""
