"""docs/configuration.md lists every `spark.streamwin.*` setting the code reads, and only those."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "configuration.md"
SETTING = re.compile(r"spark\.streamwin\.[A-Za-z0-9_.]*[A-Za-z0-9_]")


def _read_by_the_code() -> dict[str, list[str]]:
    """Each setting name in the Scala sources (not their tests) and the Python package, with where it is."""
    sources = [p for p in (ROOT / "jvm").rglob("*.scala") if "/test/" not in p.as_posix()]
    sources += sorted((ROOT / "python" / "streamwin").rglob("*.py"))
    found: dict[str, list[str]] = {}
    for path in sources:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for name in SETTING.findall(line):
                found.setdefault(name, []).append(f"{path.relative_to(ROOT)}:{number}")
    return found


def _listed_on_the_page() -> set[str]:
    """The settings in the first column of the page's table of streamwin's settings."""
    return {m.group(1) for m in re.finditer(r"^\| `(spark\.streamwin\.[^`]+)` \|", PAGE.read_text(), re.MULTILINE)}


def test_the_scan_sees_the_settings_the_code_reads() -> None:
    # The known ones, each where it is defined: if the scan saw none of them, the next test would check nothing.
    found = _read_by_the_code()
    assert any("RowBag.scala" in w for w in found.get("spark.streamwin.buffer.memoryBytes", []))
    assert any("StoredEngines.scala" in w for w in found.get("spark.streamwin.stream.inlineKeptRows", []))
    assert any("EkuiperDialect.scala" in w for w in found.get("spark.streamwin.ekuiper.timestamp", []))


def test_every_setting_the_code_reads_is_on_the_page() -> None:
    listed = _listed_on_the_page()
    missing = {name: where for name, where in _read_by_the_code().items() if name not in listed}
    assert not missing, f"docs/configuration.md does not list these settings the code reads: {missing}"


def test_the_page_lists_no_setting_the_code_does_not_read() -> None:
    stale = _listed_on_the_page() - set(_read_by_the_code())
    assert not stale, f"docs/configuration.md lists settings no code reads: {sorted(stale)}"
    mentioned = set(SETTING.findall(PAGE.read_text()))
    assert mentioned <= set(_read_by_the_code()), sorted(mentioned - set(_read_by_the_code()))
