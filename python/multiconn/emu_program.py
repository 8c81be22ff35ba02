"""The `multiconn-emu` program of a pip install: the emulator's command line
(`multiconn-emu SCENARIO --out DIR ...`, docs/emulator.md) run by the native extension, which
carries the emulator (the same command line as the binary `cargo build -p multiconn-emu`
builds). `multiconn emulate` starts it as a child process."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    """Runs the emulator on this process's command line and exits with its code.

    The emulator looks for the stacks' programs on PATH, then beside its own executable; here
    that executable is the interpreter (symbolic links resolved, so possibly outside the
    virtualenv), so the folder of this program (a virtualenv's `bin`, where `make emu-tquic`
    puts tquic's tools) is added at the end of PATH instead."""
    from ._core import emu_main

    here = str(Path(sys.argv[0]).resolve().parent) if sys.argv and sys.argv[0] else None
    if here:
        path = os.environ.get("PATH", "")
        if here not in path.split(os.pathsep):
            os.environ["PATH"] = os.pathsep.join(filter(None, [path, here]))
    sys.exit(emu_main(sys.argv[1:]))


if __name__ == "__main__":
    main()
