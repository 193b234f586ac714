"""retrograd.core.import_extension: how a sibling loads its compiled module,
with Cython's own layout errors turned into an ImportError that says what to
install (abi.pxd, rule 3)."""
import sys

import pytest

import retrograd.core as core


@pytest.fixture
def fake_module(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(name, body):
        (tmp_path / f"{name}.py").write_text(body)
        monkeypatch.delitem(sys.modules, name, raising=False)
        return name
    return make


def test_loads_and_returns_the_module(fake_module):
    name = fake_module("rg_fake_ok", "VALUE = 3\n")
    assert core.import_extension("rg-fake", name).VALUE == 3


def test_a_smaller_core_class_becomes_an_import_error(fake_module):
    # what Cython raises when a core class is smaller than compiled for
    name = fake_module("rg_fake_size", "raise ValueError('retrograd.core.abi.Tensor size changed')\n")
    with pytest.raises(ImportError) as info:
        core.import_extension("rg-fake", name)
    msg = str(info.value)
    assert "rg-fake" in msg and "size changed" in msg and "rebuild" in msg
    assert "ABI {}.{}".format(*core.ABI_VERSION) in msg
    assert isinstance(info.value.__cause__, ValueError)


def test_a_missing_core_function_names_what_to_install(fake_module):
    name = fake_module("rg_fake_fn", "raise ImportError('retrograd.core.abi does not export "
                                     "expected C function rg_new')\n")
    with pytest.raises(ImportError) as info:
        core.import_extension("rg-fake", name)
    msg = str(info.value)
    assert "rg-fake does not match the installed retrograd-core" in msg and "rg_new" in msg


def test_the_handshake_message_passes_through(fake_module):
    name = fake_module("rg_fake_hs", "import retrograd.core as c\n"
                                     "c.check_abi('rg-fake', (9, 0))\n")
    with pytest.raises(ImportError) as info:
        core.import_extension("rg-fake", name)
    assert str(info.value).startswith("rg-fake was built against retrograd-core ABI 9.0")
    assert info.value.__cause__ is None
