"""The installed distribution must carry every package of the source tree, and run the modules
it compiled as compiled."""

import importlib
import os
import tomllib
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
import tongits.engine.compiled as compiled_modules
from tongits.engine.compiled import MODULES, SourceFinder, pure_requested, running_compiled

ROOT = Path(__file__).resolve().parents[1]


def test_every_source_package_is_listed_in_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    listed = set(config["setuptools"]["packages"])
    mapping = config["setuptools"]["package-dir"]
    found = set()
    for package, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *rel)))
    assert found == listed


def test_an_install_runs_the_listed_modules_compiled() -> None:
    """setup.py compiles the modules of tongits.engine.compiled (docs/BOTS.md: ~1.4x the
    speed); a build that runs them as Python all the same, a failed compile or an extension
    Python does not find, fails here. TONGITS_PURE=1 asks for pure Python on purpose."""
    if pure_requested():
        pytest.skip("TONGITS_PURE=1: the install was built, and runs, as pure Python")
    pytest.importorskip("pettingzoo")  # the listed modules of tongits.client.rl need the rl extra
    for name in MODULES:
        importlib.import_module(name)
    compiled = running_compiled()
    as_python = [name for name in MODULES if name not in compiled]
    assert as_python == [], (
        f"run as Python: {as_python}: their .py changed since the install compiled them "
        "(`pip install -e .` compiles them again), or the compile failed (`pip install -v .` "
        "says why)")


def _built(tmp_path: Path, *, changed_after: float) -> Path:
    """A package ``built`` under tmp_path whose module ``hot`` has a (dummy) extension beside
    its source, the source written ``changed_after`` seconds after the extension."""
    package = tmp_path / "built"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    source = package / "hot.py"
    source.write_text("X = 1\n")
    extension = package / f"hot{EXTENSION_SUFFIXES[0]}"
    extension.write_bytes(b"")
    os.utime(extension, (1_000_000, 1_000_000))
    os.utime(source, (1_000_000 + changed_after, 1_000_000 + changed_after))
    return package


def test_a_source_changed_after_the_build_runs_as_python(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editable install whose engine was edited (or checked out) since it was compiled runs
    the edited source, not the old rules of the extension."""
    monkeypatch.delenv("TONGITS_PURE", raising=False)
    monkeypatch.setattr(compiled_modules, "MODULES", ("built.hot",))
    package = _built(tmp_path, changed_after=60)
    spec = SourceFinder().find_spec("built.hot", [str(package)])
    assert spec is not None and spec.origin == str(package / "hot.py")
    fresh = _built(tmp_path / "fresh", changed_after=0.5)  # written by the same install
    spec = SourceFinder().find_spec("built.hot", [str(fresh)])
    assert spec is not None and spec.origin == str(fresh / f"hot{EXTENSION_SUFFIXES[0]}")


def test_tongits_pure_passes_the_extensions_over(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiled_modules, "MODULES", ("built.hot",))
    package = _built(tmp_path, changed_after=0)
    monkeypatch.setenv("TONGITS_PURE", "1")
    spec = SourceFinder().find_spec("built.hot", [str(package)])
    assert spec is not None and spec.origin == str(package / "hot.py")
