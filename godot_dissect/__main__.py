"""python -m godot_dissect"""

import sys

from .cli import main

sys.exit(main())
