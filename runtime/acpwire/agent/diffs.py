"""Diffs built from a file's old and new text, as the tool call content of each version.

    v2_diff("/repo/a.py", old, new)   # v2 `Diff`: the structured change + a `git_patch`
    v1_diff("/repo/a.py", old, new)   # v1 `Diff`: path, oldText, newText

`old` is None for a file the tool creates; in v2, `new` is None for a file it deletes (v1
has no deletion: its `newText` is required, pass ""). Both refuse a relative path (ValueError):
the schema's diff paths are absolute.
"""

from __future__ import annotations

import os

import acp_schema.v1 as v1
import acp_schema.v2 as v2

# Git's C-style quoting of a path with unusual characters (core.quotePath, its default).
_ESCAPES = {"\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f", "\r": "r"}
_ESCAPES |= {'"': '"', "\\": "\\"}


def v2_diff(path: str, old: str | None, new: str | None) -> v2.Diff:
    """The v2 diff content of one file change: `changes` names the operation (add when `old`
    is None, delete when `new` is None, modify otherwise), `patch` is its `git_patch` text
    (None when the text did not change: there is nothing to render)."""
    change = _change(path, old, new)
    text = git_patch(path, old, new)
    patch = v2.DiffPatch(format="git_patch", text=text) if text else None
    return v2.Diff(changes=[change], patch=patch)


def v1_diff(path: str, old: str | None, new: str) -> v1.Diff:
    """The v1 diff content of one file change (`old` None: a new file)."""
    require_absolute(path, "diff path", 'v1 Diff.path: "The absolute file path being modified."')
    return v1.Diff(path=path, old_text=old, new_text=new)


def git_patch(path: str, old: str | None, new: str | None) -> str:
    """One `diff --git` section in ACP's `git_patch` format: absolute paths without `a/`/`b/`
    prefixes, `/dev/null` for the missing side, "" when the text is unchanged."""
    require_absolute(path, "diff path", V2_DIFF_PATHS)
    if old == new:
        return ""
    name = _quote(path)
    header = [f"diff --git {name} {name}\n"]
    if old is None:
        header.append("new file mode 100644\n")
    if new is None:
        header.append("deleted file mode 100644\n")
    import difflib  # on first use: ~1.5M instructions an agent's start need not pay

    hunks = difflib.unified_diff(
        _lines(old),
        _lines(new),
        fromfile="/dev/null" if old is None else name,
        tofile="/dev/null" if new is None else name,
        lineterm="\n",
    )
    return "".join(header) + "".join(hunks)


def _change(path: str, old: str | None, new: str | None) -> v2.DiffChange:
    require_absolute(path, "diff path", V2_DIFF_PATHS)
    if old is None:
        return v2.AddDiffChange(path=path, file_type="text")
    if new is None:
        return v2.DeleteDiffChange(path=path, file_type="text")
    return v2.ModifyDiffChange(path=path, file_type="text")


def _lines(text: str | None) -> list[str]:
    """The text's lines for difflib, each ending in "\\n"; a last line without one carries
    git's "\\ No newline at end of file" marker (so it differs from the same line with one)."""
    if not text:
        return []
    lines = [line + "\n" for line in text.split("\n")]
    if text.endswith("\n"):
        lines.pop()
    else:
        lines[-1] += "\\ No newline at end of file\n"
    return lines


def _quote(path: str) -> str:
    if not any(char in _ESCAPES or char < " " or char > "\x7e" for char in path):
        return path
    quoted = []
    for char in path:
        if char in _ESCAPES:
            quoted.append("\\" + _ESCAPES[char])
        elif " " <= char <= "\x7e":
            quoted.append(char)
        else:
            quoted.extend(f"\\{byte:03o}" for byte in char.encode())
    return '"' + "".join(quoted) + '"'


V2_DIFF_PATHS = "v2 Diff: `changes` is authoritative for affected absolute paths"


def require_absolute(path: str, what: str, rule: str) -> None:
    """ValueError unless `path` is absolute on this machine (the agent's: the schema's
    `AbsolutePath` "uses the native syntax of the machine the Agent runs on")."""
    if not os.path.isabs(path):
        raise ValueError(
            f"{what} {path!r} is relative: ACP paths MUST be absolute (schema: {rule}); "
            "join it with the session's cwd"
        )
