"""`mypy --strict` on a user's module, against the acpwire and acp_schema of this checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers.paths import ROOT


def mypy_strict_errors(code: str, tmp_path: Path) -> list[str]:
    """The `mypy --strict` errors in `code`, a user's module importing acpwire/acp_schema;
    each error line starts with the snippet's path, then `:LINE: error:`."""
    snippet = tmp_path / "snippet.py"
    snippet.write_text(code)
    cache = f"--cache-dir={tmp_path / 'mypy_cache'}"  # a shared cache can be stale
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", cache, str(snippet)]
    env = {"MYPYPATH": f"{ROOT / 'runtime'}:{ROOT / 'generated'}", "PATH": "/usr/bin:/bin"}
    result = subprocess.run(mypy, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    errors = [line for line in result.stdout.splitlines() if line.startswith(str(snippet))]
    assert errors, result.stdout + result.stderr
    return errors
