"""Read by mypy only, never run: the check fails if a ``tongits.*`` import falls back to ``Any``.

Each line below assigns a real value to a variable of the wrong type and silences exactly that
error. While the import resolves to its real types, mypy reports the error and the ``ignore``
is used. If the import ever becomes ``Any`` (the module not found under an
``ignore_missing_imports``, ``follow_imports = skip``, a package gone untyped), the assignment
type-checks, the ``ignore`` is unused, and ``warn_unused_ignores`` (part of ``strict``) fails
the run. One line per package and per package a bot author or a test imports from another.
"""

from tongits.client.sdk import BotRun
from tongits.engine import Card, SeatView
from tongits.engine.policies import get_policy
from tongits.protocol import Codec, ErrorCode
from tongits.server import ServerConfig

card: None = Card.parse("Th")  # type: ignore[assignment]
view: None = SeatView  # type: ignore[assignment]
policy: None = get_policy  # type: ignore[assignment]
codec: None = Codec()  # type: ignore[assignment]
code: None = ErrorCode.BAD_CARD  # type: ignore[assignment]
config: None = ServerConfig()  # type: ignore[assignment]
run: None = BotRun  # type: ignore[assignment]
