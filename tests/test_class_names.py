"""Every class in tongits.* has a name of its own: two classes called alike (the protocol's
``Move`` and the engine's) force aliases at every import and make a traceback or a docstring
ambiguous. The classes are found by importing every module of the four packages."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import defaultdict

PACKAGES = ("engine", "protocol", "server", "client")


def module_names() -> list[str]:
    names = []
    for package in PACKAGES:
        root = importlib.import_module(f"tongits.{package}")
        names.append(root.__name__)
        names += [m.name for m in pkgutil.walk_packages(root.__path__, f"{root.__name__}.")]
    return names


def class_homes() -> dict[str, set[str]]:
    """Class name -> the modules that define a class of that name."""
    homes: dict[str, set[str]] = defaultdict(set)
    for name in module_names():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if inspect.isclass(value) and value.__module__ == name and attr == value.__name__:
                homes[attr].add(name)
    return homes


def test_the_walk_sees_every_package() -> None:
    found = set(module_names())
    assert {"tongits.engine.moves", "tongits.protocol.messages", "tongits.server.table.table",
            "tongits.client.tui.state"} <= found
    homes = class_homes()
    assert homes["Move"] == {"tongits.engine.moves"}
    assert "MoveRequest" in homes and "SeatView" in homes


def test_no_two_classes_share_a_name() -> None:
    shared = {name: sorted(where) for name, where in class_homes().items() if len(where) > 1}
    assert shared == {}
