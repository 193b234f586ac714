"""The ImportError a user gets for a subpackage whose distribution is not
installed names that distribution and how to install it. Each test runs in
the install sets where the distribution is really absent (noxfile.py), so
the messages are checked against real installs, not simulated ones."""
import importlib

import pytest


def _expect_missing(get, dist):
    with pytest.raises(ImportError) as info:
        get()
    msg = str(info.value)
    assert dist in msg, msg
    assert "pip install" in msg, msg
    assert "retrograd[all]" in msg, msg


@pytest.mark.requires("retrograd")
@pytest.mark.absent("retrograd-forward-ad")
def test_forward_ad_names_its_distribution():
    rg = importlib.import_module("retrograd")
    _expect_missing(lambda: rg.autograd.forward_ad, "retrograd-forward-ad")

    def from_import():
        from retrograd.autograd import forward_ad  # noqa: F401
    _expect_missing(from_import, "retrograd-forward-ad")

    def dotted_import():
        import retrograd.autograd.forward_ad  # noqa: F401
    _expect_missing(dotted_import, "retrograd-forward-ad")


@pytest.mark.requires("retrograd")
@pytest.mark.absent("retrograd-profiler")
def test_profiler_names_its_distribution():
    rg = importlib.import_module("retrograd")
    _expect_missing(lambda: rg.profiler, "retrograd-profiler")

    def from_import():
        from retrograd import profiler  # noqa: F401
    _expect_missing(from_import, "retrograd-profiler")


@pytest.mark.requires("retrograd", "retrograd-forward-ad")
def test_forward_ad_is_the_installed_distribution():
    rg = importlib.import_module("retrograd")
    assert rg.autograd.forward_ad is importlib.import_module("retrograd.forward_ad")
    # torch's idiom: import torch.autograd.forward_ad as fwAD
    import retrograd.autograd.forward_ad as fwAD
    assert fwAD is rg.autograd.forward_ad
    assert fwAD.dual_level is importlib.import_module("retrograd.forward_ad").dual_level


@pytest.mark.requires("retrograd", "retrograd-profiler")
def test_profiler_is_the_installed_distribution():
    rg = importlib.import_module("retrograd")
    assert rg.profiler is importlib.import_module("retrograd.profiler")


@pytest.mark.requires("retrograd")
def test_unknown_attribute_is_still_an_attribute_error():
    rg = importlib.import_module("retrograd")
    with pytest.raises(AttributeError, match="no_such_subpackage"):
        rg.no_such_subpackage  # noqa: B018
    with pytest.raises(AttributeError, match="no_such_subpackage"):
        rg.autograd.no_such_subpackage  # noqa: B018


@pytest.mark.requires("retrograd")
@pytest.mark.absent("retrograd-distributed")
def test_distributed_names_its_distribution():
    rg = importlib.import_module("retrograd")
    _expect_missing(lambda: rg.distributed, "retrograd-distributed")
    # DDP lives in the umbrella (torch's place) and needs the distribution
    _expect_missing(lambda: rg.nn.parallel.DistributedDataParallel(rg.nn.Linear(1, 1)),
                    "retrograd-distributed")


@pytest.mark.requires("retrograd", "retrograd-distributed")
def test_distributed_is_the_installed_distribution():
    rg = importlib.import_module("retrograd")
    assert rg.distributed is importlib.import_module("retrograd.distributed")
