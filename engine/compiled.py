"""Which modules an install compiles to C, and when one of them runs as Python all the same.

``setup.py`` compiles the modules of ``MODULES`` with Cython: the plain ``.py`` files, unchanged,
into extension modules beside them, which Python imports in their place. They are where random
play, the bots' searches and the training environment spend their time (docs/BOTS.md has the
figures); the server's own modules stay Python, since compiled they cost no less CPU per action
(docs/HOSTING.md). The training environment's two listed here are named, not imported: the
engine depends on nothing of the client.

A listed module runs from its ``.py`` instead of its extension when

- ``TONGITS_PURE=1`` is set: at install nothing is compiled; at run time the extensions are
  passed over (``bench/engine.py --pure`` measures the pure engine so);
- its ``.py`` was changed after the extension was built: an editable install whose source was
  edited or checked out since would otherwise run the old code. Nothing is printed (a warning
  would land in the terminal client's screen); ``bench/engine.py`` names such modules, and
  ``pip install -e .`` compiles them again.

Either way the results are the same, since an extension is compiled from the same source.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ExtensionFileLoader, ModuleSpec, PathFinder
from importlib.util import spec_from_file_location
from pathlib import Path
from types import ModuleType

MODULES: tuple[str, ...] = (
    "tongits.engine.cards",
    "tongits.engine.count",
    "tongits.engine.hand",
    "tongits.engine.match",
    "tongits.engine.melds",
    "tongits.engine.moves",
    "tongits.engine.settlement",
    "tongits.engine.view",
    "tongits.engine.wire",
    "tongits.engine.policies.basic",
    "tongits.engine.policies.common",
    "tongits.engine.policies.doubt",
    "tongits.engine.policies.expert",
    "tongits.engine.policies.rollout",
    "tongits.engine.policies.strong",
    "tongits.engine.policies.worlds",
    "tongits.client.rl.actions",
    "tongits.client.rl.env",
    "tongits.client.rl.observation",
)

#: A source this many seconds newer than its extension was changed after the build; within
#: it, it was only written after it by the same install (pip unpacks files in any order).
_CHANGED_AFTER = 2.0


def pure_requested() -> bool:
    """Whether ``TONGITS_PURE=1`` asks for pure Python (at install, or now)."""
    return os.environ.get("TONGITS_PURE") == "1"


def running_compiled() -> list[str]:
    """The modules of ``MODULES`` imported so far in this process that run compiled."""
    return [name for name in MODULES
            if isinstance(getattr(sys.modules.get(name), "__loader__", None),
                          ExtensionFileLoader)]


class SourceFinder(MetaPathFinder):
    """Finds a listed module as Python where its extension must not run (see the module's
    docstring); first on ``sys.meta_path``, it leaves every other import to the usual finders."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname not in MODULES:
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.origin is None or not isinstance(spec.loader, ExtensionFileLoader):
            return spec
        extension = Path(spec.origin)
        source = extension.with_name(fullname.rpartition(".")[2] + ".py")
        if not source.exists():
            return spec
        if pure_requested() or source.stat().st_mtime > extension.stat().st_mtime + _CHANGED_AFTER:
            return spec_from_file_location(fullname, source)
        return spec


def install() -> None:
    """Puts the finder first on ``sys.meta_path`` (once), before any listed module is imported."""
    if not any(isinstance(finder, SourceFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, SourceFinder())


install()
