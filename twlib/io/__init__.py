"""File formats: BIF networks, GOBNILP ``.dat`` data and UAI competition models;
``text`` checks and decodes every file they read.  The submodules are imported
on first use."""
import importlib

__all__ = ["bif", "dat", "text", "uai"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
