"""pytest imports test modules by basename (rootless: no __init__.py in the
test folders), so two test files with one name in different folders break
collection of the whole suite. Caught here, by name, before that happens."""
import collections
import pathlib


def test_test_module_basenames_are_unique():
    here = pathlib.Path(__file__).resolve().parent
    seen = collections.defaultdict(list)
    for path in here.rglob("test_*.py"):
        if "fake_cupy" not in path.parts:
            seen[path.name].append(str(path.relative_to(here)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"rename one of each: {clashes}"
