"""The shared public conformance cases (../shared/conformance) pass with `tongits replay`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

RUN = Path(__file__).parents[2] / "shared" / "conformance" / "run"


@pytest.mark.skipif(not RUN.exists(), reason="no ../shared/conformance next to the repository")
def test_public_conformance_cases_pass() -> None:
    env = dict(os.environ, TONGITS=f"{sys.executable} -m tongits.client.cli")
    run = subprocess.run(
        [sys.executable, str(RUN)], capture_output=True, text=True, env=env, timeout=600
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.stdout.strip().endswith(", 0 failed")
