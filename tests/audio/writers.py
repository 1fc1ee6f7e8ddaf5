"""Stand-in receiver programs: a Python one-liner that writes a sine as raw PCM forever."""

from __future__ import annotations

import shlex
import sys

SINE_WRITER = (
    "import math, struct, sys, time\n"
    "frame = b''.join(struct.pack('<h', int(8000 * math.sin(i / 4))) for i in range(1600))\n"
    "while True:\n"
    "    sys.stdout.buffer.write(frame); sys.stdout.buffer.flush(); time.sleep(0.1)\n"
)
#: The receiver command that writes the sine.
SINE_COMMAND = [sys.executable, "-c", SINE_WRITER]
#: The allowlist entry that allows exactly that command (an admin wrote its arguments).
SINE_ENTRY = shlex.join(SINE_COMMAND)
