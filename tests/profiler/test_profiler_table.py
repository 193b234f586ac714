"""key_averages().table(): torch's columns, sorting, row limit and input
shape grouping."""
import numpy as np
import pytest

import retrograd as rg


def _header(table):
    return [h.strip() for h in table.splitlines()[1].split("  ") if h.strip()]


def _rows(table):
    lines = table.splitlines()
    return lines[3:-2]


def _profile(mod, make, **kw):
    a, b = make((4, 4)), make((2, 3))
    with mod.profiler.profile(**kw) as prof:
        for _ in range(3):
            a * 2
        b * 2
        (a + 1).sum()
    return prof


@pytest.mark.parametrize("kw, grouped", [
    ({}, False), ({"profile_memory": True}, False), ({"record_shapes": True}, False),
    ({"record_shapes": True}, True), ({"record_shapes": True, "profile_memory": True}, True),
], ids=str)
def test_columns_match_torch(torch, kw, grouped):
    ours = _profile(rg, lambda s: rg.tensor(np.ones(s)), **kw)
    theirs = _profile(torch, lambda s: torch.ones(s), **kw)
    t_ours = ours.key_averages(group_by_input_shape=grouped).table(sort_by="cpu_time_total", row_limit=5)
    t_theirs = theirs.key_averages(group_by_input_shape=grouped).table(sort_by="cpu_time_total", row_limit=5)
    assert _header(t_ours) == _header(t_theirs)
    assert t_ours.splitlines()[-1].startswith("Self CPU time total: ")


def test_counts_and_shape_groups(torch):
    prof = _profile(rg, lambda s: rg.tensor(np.ones(s)), record_shapes=True)
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["aten::mul"].count == 4
    assert avg["aten::mul"].cpu_time == pytest.approx(avg["aten::mul"].cpu_time_total / 4)
    grouped = [(a.key, a.input_shapes, a.count) for a in prof.key_averages(group_by_input_shape=True)
               if a.key == "aten::mul"]
    tprof = _profile(torch, lambda s: torch.ones(s), record_shapes=True)
    tgrouped = [(a.key, a.input_shapes, a.count) for a in tprof.key_averages(group_by_input_shape=True)
                if a.key == "aten::mul"]
    assert sorted(grouped, key=str) == sorted(tgrouped, key=str)
    table = prof.key_averages(group_by_input_shape=True).table(row_limit=20)
    assert "[[4, 4], []]" in table and "[[2, 3], []]" in table


def test_sort_and_row_limit():
    prof = _profile(rg, lambda s: rg.tensor(np.ones(s)))
    table = prof.key_averages().table(sort_by="count", row_limit=2)
    rows = _rows(table)
    assert len(rows) == 2
    assert rows[0].split()[0] == "aten::mul"
    for key in ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count", "cpu_memory_usage"):
        values = [getattr(a, key) for a in sorted(prof.key_averages(), key=lambda a: getattr(a, key),
                                                  reverse=True)]
        assert values == sorted(values, reverse=True)
        assert len(_rows(prof.key_averages().table(sort_by=key, row_limit=1))) == 1
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="nonsense")


def test_percentages_sum_to_100():
    prof = _profile(rg, lambda s: rg.tensor(np.ones(s)))
    rows = _rows(prof.key_averages().table(row_limit=100))
    shares = [float(r.split()[1].rstrip("%")) for r in rows]
    assert sum(shares) == pytest.approx(100.0, abs=0.05)


def test_group_by_shape_without_record_shapes_as_torch(torch):
    # torch does not refuse: every event has empty shapes, so names decide
    ours = _profile(rg, lambda s: rg.tensor(np.ones(s)))
    theirs = _profile(torch, lambda s: torch.ones(s))
    o = {a.key: (a.count, a.input_shapes) for a in ours.key_averages(group_by_input_shape=True)}
    t = {a.key: (a.count, a.input_shapes) for a in theirs.key_averages(group_by_input_shape=True)}
    assert o["aten::mul"] == t["aten::mul"] == (4, [])
    with pytest.raises(ValueError, match="group_by_stack_n"):
        ours.key_averages(group_by_stack_n=-1)


def test_events_table_and_stack_grouping():
    x = rg.tensor(np.ones(3))
    with rg.profiler.profile(with_stack=True) as prof:
        x * 2
    assert "aten::mul" in prof.events().table()
    avg = prof.key_averages(group_by_stack_n=2)
    assert len(avg[0].stack) == 2
    assert "Source Location" in avg.table()
