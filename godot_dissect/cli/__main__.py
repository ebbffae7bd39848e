"""python -m godot_dissect.cli"""

import sys

from . import main

sys.exit(main())
