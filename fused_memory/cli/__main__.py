"""`python -m fused_memory.cli`, as the `fused-memory` script."""

from __future__ import annotations

import sys

from .commands import main

sys.exit(main())
