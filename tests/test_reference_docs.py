"""The API reference, docs/reference/{python,sql,scala}.md, cannot drift from the code: each page is what
docs/make_reference.py writes now (it runs every SQL example again), and each lists every public function,
checked against what the code exposes itself: the package's ``__all__``, the functions the running session
registers, and the public methods of the jar's classes (``javap``)."""

from __future__ import annotations

import difflib
import importlib.util
import re
import sys
from pathlib import Path

import pytest
from pyspark.errors import AnalysisException

import streamwin
import streamwin.plot

# Slow: CI runs it on the default line only (pytest.ini).
pytestmark = pytest.mark.default_line

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"
_spec = importlib.util.spec_from_file_location("make_reference", ROOT / "docs" / "make_reference.py")
make_reference = importlib.util.module_from_spec(_spec)
sys.modules["make_reference"] = make_reference  # dataclasses look their module up while it loads
_spec.loader.exec_module(make_reference)  # type: ignore[union-attr]

PAGES = ("python.md", "sql.md", "scala.md")


@pytest.fixture(scope="module")
def jar() -> Path:
    return make_reference.default_jar()


def _headings(text: str, level: int) -> list[str]:
    return re.findall(rf"^{'#' * level} (.+)$", text, re.MULTILINE)


def _section_bounds(text: str, heading: str) -> tuple[int, int]:
    """Where an entry is: its heading and everything up to the next heading of its level or above."""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(heading + "\n")
    following = re.compile(rf"^#{{1,{level}}} ", re.MULTILINE).search(text, start + len(heading))
    return start, following.start() if following else len(text)


def _section(text: str, heading: str) -> str:
    start, end = _section_bounds(text, heading)
    return text[start:end]


def _without_section(text: str, heading: str) -> str:
    start, end = _section_bounds(text, heading)
    return text[:start] + text[end:]


# ---------------------------------------------------------------------------------------------------------
# What each page must list, from the code

def python_problems(text: str) -> list[str]:
    """Public names of the package (``__all__``) and of ``streamwin.plot`` the page lacks or has in excess,
    and functions whose signature block misses one of their parameters."""
    import inspect

    expected = {f"sw.{n}": getattr(streamwin, n) for n in streamwin.__all__}
    expected |= {f"streamwin.plot.{n}": getattr(streamwin.plot, n) for n in streamwin.plot.__all__}
    shown = set(_headings(text, 3))
    problems = [f"missing {name}" for name in sorted(set(expected) - shown)]
    problems += [f"not public: {name}" for name in sorted(shown - set(expected))]
    for name, value in expected.items():
        if name in shown and inspect.isfunction(value):
            block = _section(text, f"### {name}")
            problems += [f"{name}: parameter {p} not in its signature" for p in inspect.signature(value).parameters
                         if not re.search(rf"\b{p}\b", block)]
    return problems


def sql_problems(text: str, spark) -> list[str]:
    """SQL functions the session registers (and eKuiper functions the dialect recognises) that the page lacks
    or has in excess."""
    registered = set(make_reference.registered_functions(spark))
    windows, bounds, _ = make_reference.ekuiper_catalogue(spark)
    ekuiper = {f.name for f in windows + bounds}
    shown = set(_headings(text, 3))
    problems = [f"missing {name}" for name in sorted((registered | ekuiper) - shown)]
    problems += [f"not registered: {name}" for name in sorted(shown - registered - ekuiper)]
    return problems


def _page_members(text: str, qualified: str) -> set[tuple[str, tuple[str, ...]]]:
    """(name, erased parameter types) of each ``def`` the page shows for a type."""
    section = _section(text, f"## {qualified}")
    members = set()
    for line in re.findall(r"^def .+$", section, re.MULTILINE):
        match = re.match(r"def (\w+)\s*(?:\[[^\]]*\])?\s*(\((.*)\))?\s*:", line)
        assert match, line
        parameters = make_reference._split_top(match.group(3) or "")
        members.add((match.group(1), tuple(make_reference.erased(p.split(":", 1)[1]) for p in parameters)))
    return members


def scala_problems(text: str, jar: Path) -> list[str]:
    """Public types of the API in the jar, and their public methods (``javap``), that the page lacks or has in
    excess (methods by name and parameter types)."""
    types = make_reference.public_scala_types(jar)
    shown = set(_headings(text, 2)) - {"Contents"}
    problems = [f"missing type {name}" for name in sorted(set(types) - shown)]
    problems += [f"not a public type of the jar: {name}" for name in sorted(shown - set(types))]
    for qualified in sorted(set(types) & shown):
        compiled = make_reference.jar_members(jar, qualified)
        listed = _page_members(text, qualified)
        problems += [f"missing {qualified}.{n}({', '.join(p)})" for n, p in sorted(compiled - listed)]
        problems += [f"not in the jar: {qualified}.{n}({', '.join(p)})" for n, p in sorted(listed - compiled)]
    return problems


# ---------------------------------------------------------------------------------------------------------

def test_the_pages_are_what_the_generator_writes_now(spark, jar, tmp_path: Path) -> None:
    make_reference.write_pages(tmp_path, spark, jar)
    for name in PAGES:
        committed = (REFERENCE / name).read_text()
        fresh = (tmp_path / name).read_text()
        diff = "".join(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True), f"committed {name}",
                                            f"generated {name}", n=1))
        assert committed == fresh, f"docs/reference/{name} is stale: run .venv/bin/python docs/make_reference.py\n{diff[:4000]}"


def test_python_page_lists_every_public_name() -> None:
    text = (REFERENCE / "python.md").read_text()
    assert python_problems(text) == []
    assert "sw.tumbling" in _headings(text, 3) and "sw.configure" in _headings(text, 3)


def test_sql_page_lists_every_function_the_session_registers(spark) -> None:
    text = (REFERENCE / "sql.md").read_text()
    registered = make_reference.registered_functions(spark)
    assert {"sw_tumbling", "sw_count", "sw_split"} <= set(registered), sorted(registered)
    assert sql_problems(text, spark) == []


def test_sql_page_signatures_are_what_the_session_checks(spark) -> None:
    """Each signature on the page is the one the session enforces: the sw_* functions' required arguments, as
    their argument check prints them, and eKuiper's, as the dialect's arity error quotes them."""
    text = (REFERENCE / "sql.md").read_text()
    for name in make_reference.registered_functions(spark):
        with pytest.raises(AnalysisException) as raised:
            spark.sql(f"SELECT {name}()")
        positional = re.search(rf"usage: {name}\(([^\[)]*)", str(raised.value)).group(1)
        signature = re.search(rf"^{name}\((.*)\)$", _section(text, f"### {name}"), re.MULTILINE).group(1)
        assert signature.startswith(positional), (name, signature, positional)
    windows, bounds, _ = make_reference.ekuiper_catalogue(spark)
    spark.sql(make_reference.EKUIPER_TABLE)
    try:
        for window in windows:
            assert f"\n{window.name}{window.arguments}\n" in _section(text, f"### {window.name}")
            with pytest.raises(AnalysisException, match=re.escape(f"({window.name}{window.arguments}), got 0")):
                spark.sql(f"SELECT count(*) FROM demo GROUP BY {window.name}()")
        for bound in bounds:
            # window_start() and window_end() belong to windowed queries, last_hit_*() to a sliding window's condition.
            place = "in the condition of a sliding window" if bound.name.startswith("last_hit") else "in a windowed"
            with pytest.raises(AnalysisException, match=re.escape(f"{bound.name}(): is only available {place}")):
                spark.sql(f"SELECT {bound.name}() FROM demo")
    finally:
        spark.catalog.dropTempView("demo")


def test_scala_page_lists_what_the_jar_exposes(jar: Path) -> None:
    text = (REFERENCE / "scala.md").read_text()
    types = make_reference.public_scala_types(jar)
    assert {"streamwin.api.functions", "streamwin.api.SplitTrigger"} <= set(types), types
    assert ("tumbling", ("Column", "String")) in make_reference.jar_members(jar, "streamwin.api.functions")
    assert scala_problems(text, jar) == []


def test_a_missing_entry_fails_each_check(spark, jar: Path) -> None:
    python = (REFERENCE / "python.md").read_text()
    assert "missing sw.count" in python_problems(_without_section(python, "### sw.count"))
    assert "missing streamwin.plot.plot_windows" in python_problems(
        _without_section(python, "### streamwin.plot.plot_windows"))
    assert any("parameter order_by" in p for p in python_problems(python.replace("order_by: Optional", "ordered: Optional")))
    sql = (REFERENCE / "sql.md").read_text()
    assert sql_problems(_without_section(sql, "### sw_session"), spark) == ["missing sw_session"]
    assert sql_problems(_without_section(sql, "### COUNTWINDOW"), spark) == ["missing COUNTWINDOW"]
    scala = (REFERENCE / "scala.md").read_text()
    without_split_by = _without_section(scala, "### functions.splitBy")
    assert scala_problems(without_split_by, jar) == [
        "missing streamwin.api.functions.splitBy(SplitTrigger, Seq, Column, Seq)"]
    one_overload_less = scala.replace("def tumbling(time: Column, size: Duration): Column\n", "")
    assert scala_problems(one_overload_less, jar) == ["missing streamwin.api.functions.tumbling(Column, Duration)"]
    assert scala_problems(_without_section(scala, "## streamwin.api.SplitTrigger"), jar) == [
        "missing type streamwin.api.SplitTrigger"]


@pytest.mark.parametrize("name", PAGES)
def test_links_and_anchors_resolve(name: str) -> None:
    page = REFERENCE / name
    text = page.read_text()
    for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
        document = page if not target else (page.parent / target).resolve()
        assert document.exists(), f"{name} links {target}, which does not exist"
        if anchor:
            slugs = {make_reference.slug(h) for h in re.findall(r"^#+ (.+)$", document.read_text(), re.MULTILINE)}
            assert anchor in slugs, f"{name} links {target}#{anchor}, which is no heading there"


def test_the_reference_is_linked_from_the_index_and_the_readme() -> None:
    for document in (ROOT / "docs" / "index.md", ROOT / "README.md"):
        text = document.read_text()
        prefix = "reference/" if document.parent.name == "docs" else "docs/reference/"
        for name in PAGES:
            assert f"]({prefix}{name})" in text, f"{document.name} does not link {prefix}{name}"
