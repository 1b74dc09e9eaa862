"""Entry point of ``python -m flashvision.bench``."""

import sys

from .cli import main

sys.exit(main())
