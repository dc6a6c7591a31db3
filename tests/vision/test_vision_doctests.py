"""The docstring examples of vision/ are tests too."""

import doctest
import importlib

import pytest

MODULES = ["vision", "vision.fitting", "vision.hexgrid", "vision.lens", "vision.profile", "vision.second_photo",
           "vision.tiles"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted and result.failed == 0
