"""Reporting helpers of the data-driven tests: where two JSON values differ, and a summary line
after pytest's own."""

from __future__ import annotations

from typing import Any

import pytest

JSON = Any


def json_diff(actual: JSON, expected: JSON, path: str = "") -> str | None:
    """Where two parsed JSON values differ (None if equal). Booleans never equal numbers."""
    where = path or "/"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: expected an object, got {actual!r}"
        if actual.keys() != expected.keys():
            missing, extra = expected.keys() - actual.keys(), actual.keys() - expected.keys()
            return f"{where}: missing keys {sorted(missing)}, extra keys {sorted(extra)}"
        for key in expected:
            diff = json_diff(actual[key], expected[key], f"{path}/{key}")
            if diff:
                return diff
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{where}: expected {expected!r}, got {actual!r}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            diff = json_diff(a, e, f"{path}/{i}")
            if diff:
                return diff
        return None
    if isinstance(expected, bool) != isinstance(actual, bool) or actual != expected:
        return f"{where}: expected {expected!r}, got {actual!r}"
    return None


def write_summary(config: pytest.Config, line: str) -> None:
    """Print a line after pytest's own summary, past output capturing (meant to be quoted)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        print(line)
    else:
        reporter.write_line(line)
