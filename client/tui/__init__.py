"""The terminal client: ``tongits play`` and ``tongits connect`` on a full screen.

A ``Session`` (``session.FakeSession`` in this process, ``net.NetSession`` over the network)
feeds updates to one ``state.TableState``; ``render`` draws the screen from it as text and
``app.TableScreen`` runs it with prompt_toolkit. Typed lines are read by ``commands`` and
completed by ``completion``, both from the view's legal moves; every rule, count and piece of
advice (``hint``) is the engine's, asked from the seat's own view. ``lobby`` is the table list
of a server (its words in ``listing``), ``launch`` starts the screens (and, for ``play``, a
server in this process) after ``dial`` has settled the address, certificate and password on the
plain terminal; ``discovery`` finds servers on the LAN. ``seats`` keeps seat tokens on disk so a
restarted client takes its seat back, ``logs`` keeps log lines off the full screen, and
``words`` holds the bits of English every screen shares.
"""
