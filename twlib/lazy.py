"""Packages whose submodules are imported on first use (PEP 562).

``import twlib`` then costs almost nothing, and a command that learns with one
method loads neither the other learners nor their solvers.

>>> getattr_, dir_ = on_first_use("twlib.io", ["text"], {})
>>> getattr_("text").__name__
'twlib.io.text'
"""
from __future__ import annotations

import importlib

__all__ = ["on_first_use"]


def on_first_use(package: str, modules, members: dict):
    """A package's ``__getattr__`` and ``__dir__``: ``modules`` are its submodules,
    ``members`` maps a name to the submodule that defines it."""
    modules = tuple(modules)

    def __getattr__(name):
        if name in modules:
            return importlib.import_module(f"{package}.{name}")
        if name in members:
            return getattr(importlib.import_module(f"{package}.{members[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        module = importlib.import_module(package)
        return sorted(set(vars(module)) | set(modules) | set(members))

    return __getattr__, __dir__
