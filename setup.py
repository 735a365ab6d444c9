"""The build's one step beyond pyproject.toml: the engine's hot modules compiled to C.

Cython compiles the modules that ``engine/compiled.py`` lists, plain ``.py`` files unchanged,
into extension modules installed beside them (in the source tree for an editable install). It
comes through ``[build-system] requires``; the C compiler is the machine's. ``TONGITS_PURE=1``
builds pure Python on purpose; a failed compile (no compiler, no Python headers) falls back to
pure Python with one warning, and the results are the same either way, only slower.
"""

from __future__ import annotations

import ast
import os
import tomllib
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, CompileError, ExecError, LinkError, PlatformError

ROOT = Path(__file__).resolve().parent
_FAILURES = (CCompilerError, CompileError, ExecError, LinkError, PlatformError, OSError)


def _listed() -> tuple[str, ...]:
    """``MODULES`` of engine/compiled.py, read, not imported (``tongits.engine`` is not
    importable before it is installed)."""
    tree = ast.parse((ROOT / "engine" / "compiled.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "MODULES":
            assert node.value is not None
            modules: tuple[str, ...] = ast.literal_eval(node.value)
            return modules
    raise LookupError("engine/compiled.py has no MODULES")


def _source(module: str) -> str:
    """The file of ``module`` by pyproject.toml's package-dir mappings (``tongits.engine`` is
    ``engine/``), relative to the project as setuptools wants it."""
    with open(ROOT / "pyproject.toml", "rb") as file:
        mapping = tomllib.load(file)["tool"]["setuptools"]["package-dir"]
    package = max((p for p in mapping if module.startswith(p + ".")), key=len)
    rest = module[len(package) + 1:].split(".")
    return str(Path(mapping[package], *rest).with_suffix(".py"))


class BuildExt(build_ext):
    """Cythonizes when it builds (not when setup.py is read: an sdist or a metadata query
    compiles nothing), on every core, and falls back to pure Python if anything fails."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self) -> None:
        try:
            from Cython.Build import cythonize
            from Cython.Compiler.Errors import CompileError as CythonError

            # annotation_typing off: annotations stay hints, as in Python (with it, Cython
            # checks the types of arguments annotated with builtin types when called)
            translated = cythonize(
                self.extensions, language_level=3, build_dir="build/cython", quiet=True,
                nthreads=self.parallel, compiler_directives={"annotation_typing": False})
            for extension, c_file in zip(self.extensions, translated, strict=True):
                extension.sources = c_file.sources  # setuptools' own object, as it prepared it
                if self.compiler.compiler_type == "unix":
                    # as fast as the default -O3 -g (bench/rl.py and bench/engine.py,
                    # alternated), in a third less of the build's time
                    extension.extra_compile_args = ["-O2", "-g0"]
            super().build_extensions()
        except (ImportError, CythonError, *_FAILURES) as error:
            for extension in self.extensions:
                Path(self.get_ext_fullpath(extension.name)).unlink(missing_ok=True)
            self.extensions[:] = []
            self.warn(f"tongits: compiling the engine failed ({error}); it is installed as "
                      "pure Python, with the same results, slower (docs/BOTS.md)")


def _extensions() -> list[Extension]:
    if os.environ.get("TONGITS_PURE") == "1":
        return []
    return [Extension(module, [_source(module)]) for module in _listed()]


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
