#!/usr/bin/env bash
# Set up godot-dissect and run the main job on a bundled sample.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -e . 2>&1 | grep -v -E "WARNING: (Running pip|Location)" || true
# A game-state message written by the real Godot 3.2.3 (var2bytes); see captures/samples/.
godot-dissect decode --dialect godot3 - < captures/samples/godot3-game-state.bin
