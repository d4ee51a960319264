"""Run every benchmark module of this folder (``bench_*.py``), each printing its own figures.

``python -m bench NAME...`` runs only the named ones (``client``, ``sim``, ...).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    wanted = {f"bench_{a}" if not a.startswith("bench_") else a for a in argv}
    for name in names:
        if wanted and name not in wanted:
            continue
        print(f"== {name}")
        module = importlib.import_module(f"bench.{name}")
        module.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
