"""The docstring examples of rules/ are tests too (so the README's test command runs them)."""

import doctest
import importlib
import pkgutil

import pytest

import rules

MODULES = ["rules"] + [f"rules.{m.name}" for m in pkgutil.iter_modules(rules.__path__) if m.name != "__main__"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
