#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Copy Bochs's stdout to ours without Bochs's own chatter, leaving what
the hypervisor wrote to port 0xE9, its verdict channel (the guest cannot
write the port).  Line by line, flushed; `make run` takes the run's
verdict from it, bootlib.py uses NOISE to the same end."""
import re
import sys

NOISE = re.compile(
    r"^(\d{11}[iedp]\[|ALSA lib |Bochs connected to screen|=+$|\s+Bochs x86 Emulator"
    r"|\s+Built from SVN|\s+Timestamp:|Next at t=|\(\d+\)[ .]?\[|Bochs is exiting"
    r"|\[[A-Z0-9 ]{6}\] |<bochs:\d+>|bx_dbg_read_linear)")


def main():
    for line in sys.stdin:
        if not NOISE.match(line):
            sys.stdout.write(line)
            sys.stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
