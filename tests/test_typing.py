"""The whole tree type-checks under ``mypy --strict`` with real cross-package types.

``mypy`` with no arguments reads its files and settings from pyproject.toml: the four packages
through the link tree ``typecheck/tongits`` (so every ``tongits.*`` import resolves to its
source, whatever kind of install the environment has), the tests and the benchmarks, all
strict; ``typecheck/canary.py`` fails the run if a ``tongits.*`` import falls back to ``Any``.
CI runs the same command before the tests, so here it usually reuses mypy's cache.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "protocol", "server", "client")


def test_mypy_strict_is_clean_across_packages() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_link_tree_names_every_package() -> None:
    """Each ``typecheck/tongits/<name>`` is a link to the source folder of ``tongits.<name>``."""
    for name in PACKAGES:
        link = ROOT / "typecheck" / "tongits" / name
        assert link.is_symlink() and link.resolve() == ROOT / name


def test_every_package_ships_its_types() -> None:
    """PEP 561: a ``py.typed`` marker in each top package, so a bot author's mypy sees the SDK's
    and the engine's types after ``pip install tongits``."""
    for name in PACKAGES:
        assert (ROOT / name / "py.typed").is_file()
