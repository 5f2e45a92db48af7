"""What the README promises a new user holds: its length, and the waits it warns of."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_the_readme_says_how_long_the_build_takes_and_that_it_repeats() -> None:
    """A first install on two busy CPUs compiled for about 3 minutes in silence, and the
    test command's `pip install '.[test]'` compiled it all again: a user is told both."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "about 3 minutes on two busy ones" in text
    assert "compiles it again" in text and "compiles the core a second time" in text
