"""Old import paths kept working after the one-harness restructure (``grinch_env.game`` is ``grinch_env.grinch.game``).

:func:`install` puts a meta-path finder in front of the import system that
answers an old module name with the module at its new path: the very same
module object (so monkeypatching, ``isinstance`` and pickles agree), imported
only when the old name is first used.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Mapping


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, aliases: Mapping[str, str]) -> None:
        self.aliases = dict(aliases)
        self._real_specs: dict[str, importlib.machinery.ModuleSpec] = {}

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001 - the import protocol's signature
        if fullname in self.aliases:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):  # noqa: ANN001
        module = importlib.import_module(self.aliases[spec.name])
        self._real_specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module) -> None:  # noqa: ANN001
        # The import system stamped the alias's spec on the real module: give it its own back.
        module.__spec__ = self._real_specs[module.__spec__.name]


def bind_loaded() -> None:
    """Put every alias whose module is already imported into ``sys.modules`` now.

    Importing an alias later would set the parent package's attribute of that
    name (``grinch_env.env``) to the module, hiding what the package binds
    there (the ``env()`` function).
    """
    for finder in sys.meta_path:
        if isinstance(finder, _AliasFinder):
            for old, new in finder.aliases.items():
                if new in sys.modules:
                    module = sys.modules.setdefault(old, sys.modules[new])
                    parent, _, child = old.rpartition(".")
                    if parent in sys.modules and not hasattr(sys.modules[parent], child):
                        setattr(sys.modules[parent], child, module)


def install(aliases: Mapping[str, str]) -> None:
    """Answer each old module name in ``aliases`` with the module at its new name."""
    for finder in sys.meta_path:
        if isinstance(finder, _AliasFinder):
            finder.aliases.update(aliases)
            return
    sys.meta_path.insert(0, _AliasFinder(aliases))
