"""Root pytest hooks: nbval skips comparing stderr, where numba's cold-cache
compile messages appear only on some runs."""


def pytest_collectstart(collector):
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare += ("stderr",)
