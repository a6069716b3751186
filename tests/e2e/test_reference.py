"""The API reference as `nox -s docs` renders it: the public packages a user imports from are
rendered, every name they export is documented (tests/test_docs.py checks each module), every
type in a rendered signature links to where it is documented, and search is on."""

from __future__ import annotations

import functools
import html
import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

from helpers.paths import ROOT


@functools.cache
def docs_build() -> Any:
    spec = importlib.util.spec_from_file_location("docs_build", ROOT / "docs" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    output = tmp_path_factory.mktemp("reference")
    return output, docs_build().build(output)


def page(output: Path, module: str) -> str:
    return (output / (module.replace(".", "/") + ".html")).read_text()


def text_of(section: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", section)).split())


def section(output: Path, module: str, name: str) -> str:
    content = page(output, module)
    start = content.index(f'<section id="{name}">')
    return content[start : content.index("</section>", start)]


def test_the_public_packages_are_rendered() -> None:
    assert {"acpwire.agent", "acpwire.client", "acpwire.errors"} <= set(docs_build().MODULES)


def test_the_build_has_no_problems(reference: tuple[Path, list[str]]) -> None:
    """No pdoc warning, no undocumented public name, no unlinked type in a signature."""
    assert reference[1] == []


def test_search_is_on(reference: tuple[Path, list[str]]) -> None:
    output, _ = reference
    assert (output / "search.js").stat().st_size > 0
    assert "search.js" in page(output, "acpwire")


def test_a_type_the_reference_does_not_render_is_reported(tmp_path: Path) -> None:
    """The check behind `test_the_build_has_no_problems`: a dotted name of this project in a
    declaration, not inside a link, is a problem."""
    (tmp_path / "acpwire").mkdir()
    (tmp_path / "acpwire" / "agent.html").write_text(
        '<section id="f"><div class="attr function">def f() -&gt; <span class="n">acpwire'
        '</span><span class="o">.</span><span class="n">_wire</span><span class="o">.</span>'
        '<span class="n">Call</span>: <a href="x">acpwire.agent.Turn</a></div>'
        '<a class="headerlink" href="#f"></a></section>'
    )
    assert docs_build().unlinked(tmp_path) == [
        "acpwire.agent.f: acpwire._wire.Call is not linked (not rendered)"
    ]


def test_members_of_a_private_base_class_are_rendered_as_the_class_own(
    reference: tuple[Path, list[str]],
) -> None:
    """`SessionState.apply`, `.messages`, `.unknown` are defined on the private `_Fold`."""
    text = text_of(section(reference[0], "acpwire.client", "SessionState"))
    for member in ("def apply(self, update:", "messages:", "unknown:", "title:", "notices:"):
        assert member in text, member
    assert "_Fold" not in text


def test_generated_unions_are_shown_by_name(reference: tuple[Path, list[str]]) -> None:
    text = text_of(section(reference[0], "acpwire.client", "TurnEvent"))
    assert "acp_schema.v2.SessionUpdate]" in text  # where users import it from
    assert "UnionInfo" not in text


def test_prompt_is_typed_and_documented_where_it_is_rendered(
    reference: tuple[Path, list[str]],
) -> None:
    text = text_of(section(reference[0], "acpwire", "prompt"))
    assert "conn: Negotiated | V1Negotiated" in text
    assert "params: acp_schema.v2.PromptRequest | acp_schema.v1.PromptRequest" in text
    assert "-> contextlib.AbstractAsyncContextManager[TurnEvents]" in text
    assert "Any" not in text.split("Send `session/prompt`")[0]
    assert "module's docstring" not in text
    assert "A v2 turn ends at the first idle" in text


def test_the_tool_call_handle_is_documented(reference: tuple[Path, list[str]]) -> None:
    text = text_of(section(reference[0], "acpwire", "ToolCallHandle"))
    for method in ("request_permission", "update", "diff", "stream", "tool_call_id"):
        assert f"{method}" in text, method
    tool_call = section(reference[0], "acpwire", "AgentTurn")
    assert 'href="#ToolCallHandle"' in tool_call
