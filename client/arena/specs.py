"""What ``tongits arena --bots`` accepts, one entry per seat position.

* a built-in name of ``tongits.engine.policies.POLICIES`` (``random``, ``greedy``, ``strong``…);
* ``py:package.module:factory`` or ``py:path/to/file.py:factory``: a Python factory that takes
  a seed and returns a policy, exactly like the built-ins. A module is imported with the current
  directory first on ``sys.path`` (as ``python -m`` does), a file is loaded from its path;
* ``cmd:COMMAND ARGS``: an external program in any language that speaks the public protocol
  (docs/PROTOCOL.md); the arena runs a loopback server for it and tells it where to sit through
  the environment (``client/arena/host.py``).

Built-in and ``py:`` bots are *in-process*: they are plain callables and run anywhere the arena
runs, including Dask workers. ``cmd:`` bots need the arena's own server.
"""

from __future__ import annotations

import enum
import functools
import importlib
import importlib.util
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tongits.engine.policies import POLICIES, Policy

Factory = Callable[[int | str | None], Policy]


class BotSpecError(ValueError):
    """A ``--bots`` entry that names no bot the arena can run (the message says why)."""


class BotKind(enum.StrEnum):
    BUILTIN = "builtin"
    PYTHON = "py"
    COMMAND = "cmd"


@dataclass(frozen=True, slots=True)
class BotSpec:
    """One ``--bots`` entry: its kind and the text after the ``py:`` / ``cmd:`` prefix."""

    kind: BotKind
    target: str

    @classmethod
    def parse(cls, text: str) -> BotSpec:
        """``BotSpec.parse("py:mybot:make")``; ``BotSpecError`` for an empty or unknown entry."""
        text = text.strip()
        prefix, sep, rest = text.partition(":")
        if sep and prefix in (BotKind.PYTHON, BotKind.COMMAND):
            if not rest.strip():
                raise BotSpecError(f"{text!r}: nothing after {prefix}:")
            spec = cls(BotKind(prefix), rest.strip())
            if spec.kind is BotKind.COMMAND and not shlex.split(spec.target):
                raise BotSpecError(f"{text!r}: an empty command")
            return spec
        if text not in POLICIES:
            known = ", ".join(sorted(POLICIES))
            raise BotSpecError(
                f"unknown bot {text!r}; known: {known}, py:MODULE:FACTORY or cmd:COMMAND"
            )
        return cls(BotKind.BUILTIN, text)

    def __str__(self) -> str:
        return self.target if self.kind is BotKind.BUILTIN else f"{self.kind}:{self.target}"

    def __repr__(self) -> str:
        return f"BotSpec.parse({str(self)!r})"

    @property
    def in_process(self) -> bool:
        return self.kind is not BotKind.COMMAND

    @property
    def argv(self) -> list[str]:
        """The command line of a ``cmd:`` bot."""
        return shlex.split(self.target)

    @property
    def source_file(self) -> Path | None:
        """The Python file of a ``py:path/file.py:factory`` bot (to ship it to cluster workers)."""
        if self.kind is not BotKind.PYTHON:
            return None
        module = self.target.rpartition(":")[0]
        return Path(module) if module.endswith(".py") else None

    def factory(self) -> Factory:
        """The seed -> policy factory of an in-process bot; ``BotSpecError`` if it cannot be
        loaded."""
        if self.kind is BotKind.BUILTIN:
            return POLICIES[self.target]
        if self.kind is BotKind.PYTHON:
            return _load_factory(self.target)
        raise BotSpecError(f"{self}: an external program has no in-process policy")

    def policy(self, seed: int | str | None) -> Policy:
        return self.factory()(seed)

    def check(self, seed: int | str) -> None:
        """``BotSpecError`` unless this in-process bot loads and its factory makes a policy
        (of ``seed``: one the arena will give it, in the form its factory may expect).
        Naming the policy itself (``py:mybot.py:policy``, the function of A bot in 20 lines)
        is the likely slip: called with a seed, it fails inside its own code, which a
        traceback from deep in a game would not explain."""
        factory = self.factory()
        if self.kind is not BotKind.PYTHON:
            return
        try:
            policy = factory(seed)
        except Exception as exc:  # noqa: BLE001 - whatever the user's code raises
            raise BotSpecError(
                f"py:{self.target}: calling it with a seed, as the arena does, failed: "
                f"{type(exc).__name__}: {exc} (a py: entry names a factory, a function of a "
                f"seed that returns the policy; for a policy `policy`, name "
                f"def make(seed): return policy)") from exc
        if not callable(policy):
            raise BotSpecError(f"py:{self.target}: called with a seed it returned "
                               f"{type(policy).__name__}, not a policy (a function of a view)")


def parse_bots(text: str) -> tuple[BotSpec, ...]:
    """``--bots``: comma-separated entries (so a ``cmd:`` command line cannot contain a
    comma: put such a command in a script)."""
    return tuple(BotSpec.parse(part) for part in text.split(",") if part.strip())


@functools.cache
def _load_factory(target: str) -> Factory:
    module_name, sep, attribute = target.rpartition(":")
    if not sep or not module_name or not attribute:
        raise BotSpecError(f"py:{target}: expected py:MODULE:FACTORY or py:FILE.py:FACTORY")
    try:
        if module_name.endswith(".py") and not Path(module_name).exists():
            # On a cluster worker: the file was shipped with ``Client.upload_file``, which puts
            # it on ``sys.path`` under its own name.
            module = importlib.import_module(Path(module_name).stem)
        elif module_name.endswith(".py"):
            path = Path(module_name).resolve()
            spec = importlib.util.spec_from_file_location(f"tongits_arena_{path.stem}", path)
            if spec is None or spec.loader is None:
                raise BotSpecError(f"py:{target}: cannot load {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        else:
            cwd = os.getcwd()
            if cwd not in sys.path:
                sys.path.insert(0, cwd)
            module = importlib.import_module(module_name)
    except BotSpecError:
        raise
    except Exception as exc:  # noqa: BLE001 - any import failure is the user's bad input
        raise BotSpecError(f"py:{target}: cannot import {module_name}: {exc}") from exc
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise BotSpecError(f"py:{target}: {module_name} has no callable {attribute!r}")
    return factory  # type: ignore[no-any-return]
