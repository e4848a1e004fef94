#!/bin/sh
# usage: run_sdk_test.sh sdk|inspector SRC_DIR WORK_DIR MCP_HOST_RUN
# Clients this project did not write against hostbridge-agent mcp: installs
# the pinned packages (package-lock.json) with `npm ci` into WORK_DIR (in the
# build dir, never the source tree), then runs sdk_client_test.mjs (the
# official TypeScript SDK) or inspector_test.sh (the Inspector's CLI mode)
# against a real watch. Node stays out of the C++ build: without node or npm, or
# without the npm registry, the test is skipped (exit 77) with the reason.
set -eu
which=$1 src=$2 work=$3 host_run=$4
skip() { echo "SKIP: $*"; exit 77; }
command -v node >/dev/null 2>&1 || skip "node is not installed (apt-get install nodejs npm)"
command -v npm >/dev/null 2>&1 || skip "npm is not installed (apt-get install npm)"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 18 ] || skip "node $(node --version) is older than the SDK's engines (>=18)"
mkdir -p "$work"
cp "$src/package.json" "$src/package-lock.json" "$src/sdk_client_test.mjs" \
    "$src/inspector_test.sh" "$work/"
# npm ci again only when the lockfile changed.
if ! cmp -s "$src/package-lock.json" "$work/node_modules/.hostbridge-lock" 2>/dev/null; then
    if ! (cd "$work" && npm ci --no-audit --no-fund --ignore-scripts >npm-ci.log 2>&1); then
        cat "$work/npm-ci.log"
        skip "npm ci failed (is the npm registry reachable?)"
    fi
    cp "$src/package-lock.json" "$work/node_modules/.hostbridge-lock"
fi
cd "$work"
case $which in
    sdk) exec "$host_run" --mutating 3 --deny init --deny-later down -- node sdk_client_test.mjs ;;
    inspector) exec "$host_run" --deny init --deny-later down -- sh inspector_test.sh ;;
    *) echo "usage: run_sdk_test.sh sdk|inspector SRC_DIR WORK_DIR MCP_HOST_RUN" >&2; exit 64 ;;
esac
