"""``make audit`` reads pip-audit's report right: vulnerable packages fail it, and a report where
most packages could not be audited (no network) is "not checked", never green."""

from __future__ import annotations

from tests.reliability.audit import summarize


def test_vulnerable_packages_are_listed_with_their_fixes() -> None:
    result = summarize(
        {
            "dependencies": [
                {"name": "ok", "version": "1", "vulns": []},
                {
                    "name": "bad",
                    "version": "2",
                    "vulns": [{"id": "GHSA-x", "fix_versions": ["2.1"]}],
                },
                {"name": "botkit", "skip_reason": "distribution marked as editable"},
            ]
        }
    )
    assert result.audited == 2
    assert result.vulnerable == ["bad 2: GHSA-x (fix: 2.1)"]
    assert not result.unreachable


def test_a_report_of_skipped_packages_means_the_data_was_unreachable() -> None:
    skipped = [{"name": f"p{n}", "skip_reason": "Dependency not found on PyPI"} for n in range(5)]
    assert summarize({"dependencies": skipped}).unreachable
    assert summarize({"dependencies": []}).unreachable
