#!/usr/bin/env bash
# Installs the Gatelink controller on a fresh Raspberry Pi OS (or another Debian 13 "trixie"), as root, from
# either of two sources (hardware/README.md, "Installing the software"):
#   - a release from the operator's cloud, unpacked (what `curl .../api/device/install | sudo bash` fetches and
#     runs): the tree is already built for this board, so only Debian's Node.js is installed; no npm, no compiler;
#   - a clone of the repository: sudo bash hardware/install.sh. It installs Debian's Node.js, npm and the
#     compilers, and builds the controller as `npm run build:device` does, in a temporary folder.
# Running it again updates the software and keeps the config, the key and the state. The release goes into a
# folder of its own, /opt/gatelink/releases/<version>-<time>, and /opt/gatelink/current and
# /opt/gatelink/known-good point at it, keeping the releases before it for going back; the home is the gatelink
# user's, for updates over the air (docs/design.md section 12.4.3). A running daemon is stopped only for the
# switch. It creates the gatelink user and its folders, installs the systemd unit and the modem's udev rule,
# and prints the next step: provisioning. npm's cache, when npm runs, lives in a temporary folder removed at the
# end: nothing of it stays on the card.
set -euo pipefail

src="$(cd "$(dirname "$0")/.." && pwd)"
dest="${GATELINK_HOME:-/opt/gatelink}"
unit=gatelink-device
say() { printf '==> %s\n' "$*"; }
fail() {
  printf 'install.sh: %s\n' "$*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || fail "run it as root: sudo bash $0"
# A release tree holds release.json (what it was built for); a clone holds the sources.
if [ -f "$src/release.json" ] && [ -f "$src/bin/gatelink-device.mjs" ]; then
  from=release
elif [ -f "$src/package.json" ] && [ -d "$src/device" ]; then
  from=clone
else
  fail "run it from a release (curl -fsSL https://<your cloud>/api/device/install | sudo bash) or a clone of the repository ($src is neither)"
fi
case "$src/" in "$dest"/*) fail "run it from a folder outside $dest, which holds the installed releases" ;; esac

apt-get update -qq
if [ "$from" = release ]; then
  say "Debian packages: nodejs (the release is built for this board already), no recommends"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ca-certificates nodejs >/dev/null
else
  say "Debian packages: nodejs npm build-essential python3 (the compilers build the GPIO module), no recommends"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    ca-certificates nodejs npm build-essential python3 >/dev/null
fi
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' ||
  fail "Node.js 20.19 or newer is needed and Debian's is $(node --version): use Raspberry Pi OS based on Debian 13 (trixie)"

say "groups and the gatelink user (GPIO through gpio, serial ports through dialout)"
for group in gpio dialout; do
  if ! getent group "$group" >/dev/null; then
    groupadd --system "$group"
    say "created group $group: this system had none (not a Raspberry Pi OS image?)"
  fi
done
if id gatelink >/dev/null 2>&1; then
  usermod --append --groups gpio,dialout gatelink
else
  useradd --system --home-dir /var/lib/gatelink --shell /usr/sbin/nologin --groups gpio,dialout gatelink
fi

# The build (or the copy) happens on the card (/var/tmp, not RAM) in a folder removed on exit.
work="$(mktemp -d /var/tmp/gatelink-install.XXXXXX)"
release=""
cleanup() {
  rm -rf "$work"
  if [ -n "$release" ]; then rm -rf "$release.partial"; fi
}
trap cleanup EXIT
mkdir -p "$dest/releases"
rm -rf "$dest"/releases/*.partial

if [ "$from" = release ]; then
  # The tree's native modules are built for one CPU and one Node.js ABI: refuse a mismatch before anything moves.
  built_for="$(node -p 'const r = require(process.argv[1]); r.arch + " " + r.node_abi' "$src/release.json")"
  here="$(node -p 'process.arch + " " + process.versions.modules')"
  [ "$built_for" = "$here" ] ||
    fail "this release is built for $built_for (CPU, Node.js ABI) and this board is $here: fetch the release for $(node -p process.arch)"
  version="$(node -p 'require(process.argv[1]).version' "$src/release.json")"
  name="$version-$(date -u +%Y%m%dT%H%M%SZ)"
  release="$dest/releases/$name"
  say "the controller $version into $release (copied from the release; nothing to build)"
  cp -a "$src/." "$release.partial"
else
  export npm_config_cache="$work/npm-cache"
  say "a copy of the tree and the compiler in $work (npm ci --workspace device)"
  mkdir -p "$work/src"
  (cd "$src" && tar --exclude=./node_modules --exclude=./.git --exclude=./dist --exclude=./.data \
    --exclude=./.cache --exclude=./test/artifacts -cf - .) | (cd "$work/src" && tar -xf -)
  (cd "$work/src" && npm ci --workspace device --ignore-scripts --no-audit --no-fund --loglevel=error)
  version="$(node -p 'require(process.argv[1]).version' "$work/src/package.json")"
  name="$version-$(date -u +%Y%m%dT%H%M%SZ)"
  release="$dest/releases/$name"
  say "the controller into $release (npm run build:device; a few minutes on a Pi)"
  node "$work/src/packaging/device-tree.mjs" "$release.partial"
fi
# The gatelink user's, like the home: the daemon writes the releases it is sent (signed by the release key and
# checked against its hash) beside this one, switches the links and removes old releases (docs/design.md
# section 12.4.3).
chown -R gatelink:gatelink "$release.partial"
chmod -R go-w "$release.partial"
mv -T "$release.partial" "$release"
chown gatelink:gatelink "$dest" "$dest/releases"

say "folders: /etc/gatelink (config and key) and /var/lib/gatelink (state), the gatelink user's alone"
install -d -o gatelink -g gatelink -m 0700 /etc/gatelink /var/lib/gatelink

say "the systemd unit and the modem's udev rule"
install -m 0644 "$src/hardware/$unit.service" "/etc/systemd/system/$unit.service"
install -d /etc/udev/rules.d
install -m 0644 "$src/hardware/99-gatelink-modem.rules" /etc/udev/rules.d/99-gatelink-modem.rules
systemd=no
if [ -d /run/systemd/system ]; then
  systemd=yes
  systemctl daemon-reload
  udevadm control --reload && udevadm trigger || true
else
  say "systemd is not running here: the unit is installed and takes effect at the next boot"
fi

running=no
if [ "$systemd" = yes ] && systemctl is-active --quiet "$unit"; then
  running=yes
  say "stopping $unit for the switch (it releases every output first)"
  systemctl stop "$unit"
fi
previous="$(readlink "$dest/current" 2>/dev/null || true)"
previous_good="$(readlink "$dest/known-good" 2>/dev/null || true)"
# A new link renamed over the old one: each link is always one whole release, never half of two. The release
# installed by hand is both the one to run and the known-good one systemd starts the boot guard from; an update
# over the air in progress is over (its record goes).
for link in current known-good; do
  ln -sfn "releases/$name" "$dest/$link.new"
  chown -h gatelink:gatelink "$dest/$link.new"
  mv -T "$dest/$link.new" "$dest/$link"
done
rm -f "$dest/update.json"
say "current and known-good -> releases/$name${previous:+ (before: $previous)}"
# The layout before releases: the whole tree in $dest. Nothing of it runs any more.
if [ -f "$dest/package.json" ]; then
  find "$dest" -mindepth 1 -maxdepth 1 ! -name releases ! -name current ! -name known-good -exec rm -rf {} +
fi
if [ "$running" = yes ]; then
  say "starting $unit again"
  systemctl start "$unit"
fi
# The release running now and the ones before it (current and known-good), for going back; older ones go.
for old in "$dest"/releases/*; do
  case "releases/$(basename "$old")" in "releases/$name" | "$previous" | "$previous_good") ;; *) rm -rf "$old" ;; esac
done

cat <<NEXT

Installed: $("$dest/current/bin/gatelink-device.mjs" --version) in $dest/current ($(du -sh "$release" | cut -f1)).
Going back: for both current and known-good, sudo ln -sfn releases/<previous release> $dest/<link>.new &&
sudo mv -T $dest/<link>.new $dest/<link>, then sudo systemctl restart $unit (the releases are in $dest/releases).
Next, with the provisioning code from your operator (gatelink-admin device add --label "<site>"):
  1. describe the objects: cp $dest/current/hardware/device.example.yaml /tmp/objects.yaml and edit it
  2. sudo -u gatelink $dest/current/bin/gatelink-device.mjs provision --cloud https://<your cloud> --code <code> \\
       --config /etc/gatelink/device.yaml --objects-from /tmp/objects.yaml
NEXT
