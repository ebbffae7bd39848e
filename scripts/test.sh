#!/usr/bin/env bash
# The whole test suite on a fresh machine: set up, then pytest (engines, tshark and all).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ruff check godot_dissect tests
python3 -m pytest -q "$@"
