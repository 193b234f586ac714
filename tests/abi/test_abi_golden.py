"""The golden file of core's ABI (tests/abi/abi_golden.json, written only by
`python tests/abi/abi_golden.py --update`): the installed core must match it
exactly, and the comparison must catch every kind of change."""
import copy
import json

import pytest

import abi_golden


@pytest.fixture(scope="module")
def current():
    return abi_golden.current_abi()


def test_installed_core_matches_the_golden_file(current):
    ok, why = abi_golden.verdict(abi_golden.load_golden(), current)
    assert ok, why


def test_golden_file_records_every_part_of_the_abi(current):
    golden = abi_golden.load_golden()
    assert golden["abi_version"] == list(__import__("retrograd.core").core.ABI_VERSION)
    assert "rg_wrap" in golden["functions"] and "rg_register_engine" in golden["functions"]
    for cls in ("Tensor", "Node", "SavedVariable", "AccumulateGrad", "Edge", "InputMetadata"):
        assert golden["classes"][cls]["basicsize"] > 0, cls
    assert golden["classes"]["Node"]["methods"][0].startswith("cdef list apply(")
    assert "rg_engine_execute_fn" in golden["ctypedefs"] and "rg_next_fn" in golden["ctypedefs"]
    assert golden["constants"]["RG_DEV_CUDA"] == "1"


def _bumped(abi, major=0, minor=0):
    out = copy.deepcopy(abi)
    out["abi_version"] = [abi["abi_version"][0] + major, abi["abi_version"][1] + minor]
    return out


def _edits():
    """(label, edit of a copy of the ABI, is it a break?)"""
    def drop_function(a):
        del a["functions"]["rg_sum_to"]

    def change_signature(a):
        a["functions"]["rg_wrap"] = "struct Tensor *(PyObject *)"

    def insert_method(a):
        a["classes"]["Node"]["methods"].insert(1, "cdef void inserted(self)")

    def reorder_fields(a):
        f = a["classes"]["Tensor"]["fields"]
        f[0], f[1] = f[1], f[0]

    def resize_class(a):
        a["classes"]["Edge"]["basicsize"] += 8

    def change_constant(a):
        a["constants"]["RG_DEV_CUDA"] = "2"

    def change_slot_type(a):
        a["ctypedefs"]["rg_op_exit_fn"] = a["ctypedefs"]["rg_op_exit_fn"].replace("-1", "0")

    def add_function(a):
        a["functions"]["rg_new_thing"] = "int (void)"

    def append_method(a):
        a["classes"]["Node"]["methods"].append("cdef void appended(self)")

    def append_field(a):
        a["classes"]["Tensor"]["fields"].append("cdef object _appended")
        a["classes"]["Tensor"]["basicsize"] += 8

    def add_class(a):
        a["classes"]["GraphTaskView"] = {"base": None, "fields": [], "methods": [], "basicsize": 16}

    return [
        ("drop_function", drop_function, True), ("change_signature", change_signature, True),
        ("insert_method", insert_method, True), ("reorder_fields", reorder_fields, True),
        ("resize_class", resize_class, True), ("change_constant", change_constant, True),
        ("change_slot_type", change_slot_type, True),
        ("add_function", add_function, False), ("append_method", append_method, False),
        ("append_field", append_field, False), ("add_class", add_class, False),
    ]


@pytest.mark.parametrize("label,edit,is_break", _edits(), ids=[e[0] for e in _edits()])
def test_every_change_is_caught(current, label, edit, is_break):
    new = copy.deepcopy(current)
    edit(new)
    breaks, additions = abi_golden.compare(current, new)
    assert (bool(breaks), bool(additions)) == (is_break, not is_break), (breaks, additions)
    # same version: the test fails either way, saying what to do
    ok, why = abi_golden.verdict(current, new)
    assert not ok
    assert ("ABI BREAK" in why) if is_break else ("bump RG_ABI_MINOR" in why and "--update" in why)
    # the regeneration command records an addition only after a minor bump,
    # and a break only after a major bump
    assert abi_golden.update_allowed(current, new)[0] is False
    assert abi_golden.update_allowed(current, _bumped(new, minor=1))[0] is (not is_break)
    assert abi_golden.update_allowed(current, _bumped(new, major=1))[0] is True
    # after an allowed bump the stale golden file still fails, asking to regenerate
    if not is_break:
        ok, why = abi_golden.verdict(current, _bumped(new, minor=1))
        assert not ok and "--update" in why


def test_update_refuses_an_unbumped_addition(current, tmp_path, monkeypatch, capsys):
    golden = tmp_path / "abi_golden.json"
    recorded = copy.deepcopy(current)
    del recorded["functions"]["rg_sum_to"]        # the running core then has one more
    golden.write_text(json.dumps(recorded))
    monkeypatch.setattr(abi_golden, "GOLDEN", golden)
    assert abi_golden.main(["--update"]) == 1
    assert "bump RG_ABI_MINOR" in capsys.readouterr().err
    assert json.loads(golden.read_text()) == recorded       # untouched
    assert abi_golden.main([]) == 1


def test_update_writes_what_check_then_accepts(current, tmp_path, monkeypatch):
    golden = tmp_path / "abi_golden.json"
    golden.write_text(json.dumps(_bumped(current, minor=-1) if current["abi_version"][1] else current))
    monkeypatch.setattr(abi_golden, "GOLDEN", golden)
    assert abi_golden.main(["--update"]) == 0
    assert abi_golden.main([]) == 0
    assert json.loads(golden.read_text()) == json.loads(json.dumps(current))


def test_pxd_parser_joins_statements_and_drops_comments():
    parsed = abi_golden.parse_pxd(
        "cdef enum:\n    RG_ABI_MAJOR = 1\n    RG_X = 3   # note\n\n"
        "cdef class A(B):\n    # comment (\n    cdef int f   # ABI\n"
        "    cdef list g(self,\n                list x)  # wrapped\n\n"
        "ctypedef int (*fn_t)(int a,\n                     int b) except -1\n")
    assert parsed["constants"] == {"RG_X": "3"}
    assert parsed["classes"]["A"] == {"base": "B", "fields": ["cdef int f"],
                                      "methods": ["cdef list g(self, list x)"]}
    assert parsed["ctypedefs"] == {"fn_t": "ctypedef int (*fn_t)(int a, int b) except -1"}


def test_every_slot_and_function_has_a_recorded_contract(current):
    # what a slot receives is part of the ABI: each slot type and function of
    # abi.pxd says it in the comment above it, and the golden file keeps it
    golden = abi_golden.load_golden()
    names = set(golden["functions"]) | set(golden["ctypedefs"])
    assert names <= set(golden["contracts"]), names - set(golden["contracts"])
    for name, entry in golden["contracts"].items():
        assert entry["contract"], f"{name} has no contract comment in abi.pxd"
    assert golden["contracts"]["rg_forward_grad_fn"]["semantics"] == 2
    assert "batch_size" in golden["contracts"]["rg_engine_execute_batched_fn"]["contract"]


def test_a_new_meaning_under_the_same_signature_is_a_break(current):
    new = copy.deepcopy(current)
    new["contracts"]["rg_engine_execute_fn"]["semantics"] += 1
    breaks, _ = abi_golden.compare(current, new)
    assert breaks and "semantics" in breaks[0]
    assert abi_golden.update_allowed(current, _bumped(new, minor=1))[0] is False
    assert abi_golden.update_allowed(current, _bumped(new, major=1))[0] is True


def test_a_changed_contract_needs_a_new_version_or_a_reword(current):
    new = copy.deepcopy(current)
    new["contracts"]["rg_sum_to"]["contract"] += " Now also transposes."
    breaks, _ = abi_golden.compare(current, new)
    assert breaks and "--reword rg_sum_to" in breaks[0]
    ok, why = abi_golden.verdict(current, new)
    assert not ok and "--reword" in why
    # a wording-only change is recorded when named
    assert abi_golden.compare(current, new, reworded=("rg_sum_to",)) == ([], [])
    assert abi_golden.update_allowed(current, new, ("rg_sum_to",))[0] is True


def test_contract_parser_reads_the_comment_above_each_declaration():
    parsed = abi_golden.parse_contracts(
        "# first slot (semantics 3)\n# says more\n"
        "ctypedef int (*a_fn)(int x) except -1\n"
        "cdef int rg_set_a(a_fn f) except -1\n\n"
        "cdef int rg_bare()\n\n"
        "# inline one\ncdef inline int rg_inl(int x):\n    # body comment\n    return x\n")
    assert parsed["a_fn"] == {"semantics": 3, "contract": "first slot (semantics 3) says more"}
    assert parsed["rg_set_a"] == parsed["a_fn"]
    assert parsed["rg_bare"] == {"semantics": 1, "contract": ""}
    assert parsed["rg_inl"]["contract"] == "inline one"
