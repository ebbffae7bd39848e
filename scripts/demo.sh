#!/usr/bin/env bash
# Set up godot-dissect and run the main job: every Godot message in a bundled real capture.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -e . 2>&1 | grep -v -E "WARNING: (Running pip|Location)" || true
# Real Godot 3.2.3 traffic: a client put_var()s every Godot 3 type over UDP (see captures/README.md).
godot-dissect read captures/godot3-udp-all-types.pcapng --evidence "$@"
