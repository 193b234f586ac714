"""nn.functional imports the per-topic modules' names literally (a form mypy follows through
the import cycle); these lists must stay equal to each module's ``__all__``."""
import importlib

import pytest

import retrograd.nn.functional as F

TOPIC_MODULES = ["_attention", "_conv_pool", "_pool_more", "_normalization", "_losses", "_vision", "_dropout",
                 "_linear_cross_entropy"]


@pytest.mark.parametrize("name", TOPIC_MODULES)
def test_functional_exports_every_name_of_the_topic_module(name):
    module = importlib.import_module(f"retrograd.nn.{name}")
    assert module.__all__, f"retrograd.nn.{name} exports nothing"
    missing = [n for n in module.__all__ if n not in F.__all__]
    assert missing == [], f"add {missing} to nn.functional's literal import and __all__ list for {name}"
    different = [n for n in module.__all__ if getattr(F, n) is not getattr(module, n)]
    assert different == [], f"nn.functional.{different} are not retrograd.nn.{name}'s objects"


def test_functional_all_has_no_duplicates():
    duplicated = sorted({n for n in F.__all__ if F.__all__.count(n) > 1})
    assert duplicated == []
