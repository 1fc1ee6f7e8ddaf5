"""Allow ``python -m alertstation``."""

import sys

from alertstation.cli import main

sys.exit(main())
