#!/usr/bin/env bash
# Installs the Gatelink controller on a fresh Raspberry Pi OS (or another Debian 13 "trixie"), as root:
#   sudo bash hardware/install.sh
# from a clone of the repository (hardware/README.md, "Installing the software"). Running it again updates the
# software and keeps the config, the key and the state. It installs Debian's own Node.js (20 on Raspberry Pi OS
# trixie), builds the controller into dist/ and keeps only what runs, creates the gatelink user and its folders,
# and installs the systemd unit and the modem's udev rule. It prints the next step: provisioning.
set -euo pipefail

src="$(cd "$(dirname "$0")/.." && pwd)"
dest="${GATELINK_HOME:-/opt/gatelink}"
say() { printf '==> %s\n' "$*"; }
fail() {
  printf 'install.sh: %s\n' "$*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || fail "run it as root: sudo bash $0"
[ -f "$src/package.json" ] && [ -d "$src/device" ] || fail "run it from a clone of the repository ($src has no device/)"

say "Debian packages: nodejs npm git build-essential python3 (the compilers build the GPIO module)"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm git build-essential python3 >/dev/null
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

say "the software into $dest"
mkdir -p "$dest"
if [ "$src" != "$dest" ]; then
  # What the repository holds, without what a build or a run made there.
  (cd "$src" && tar --exclude=./node_modules --exclude=./.git --exclude=./dist --exclude=./.data \
    --exclude=./.cache --exclude=./test/artifacts -cf - .) | (cd "$dest" && tar -xf -)
fi
cd "$dest"
say "npm ci, npm run build, npm prune --omit=dev (this takes a few minutes on a Pi)"
npm ci --no-audit --no-fund --loglevel=error
npm run build --silent
npm prune --omit=dev --no-audit --no-fund --loglevel=error
chown -R root:root "$dest"
chmod -R go-w "$dest"

say "folders: /etc/gatelink (config and key) and /var/lib/gatelink (state), the gatelink user's alone"
install -d -o gatelink -g gatelink -m 0700 /etc/gatelink /var/lib/gatelink

say "the systemd unit and the modem's udev rule"
install -m 0644 "$dest/hardware/gatelink-device.service" /etc/systemd/system/gatelink-device.service
install -d /etc/udev/rules.d
install -m 0644 "$dest/hardware/99-gatelink-modem.rules" /etc/udev/rules.d/99-gatelink-modem.rules
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  udevadm control --reload && udevadm trigger || true
else
  say "systemd is not running here: the unit is installed and takes effect at the next boot"
fi

cat <<NEXT

Installed: $("$dest/bin/gatelink-device.mjs" --version) in $dest.
Next, with the provisioning code from your operator (gatelink-admin device add --label "<site>"):
  1. describe the objects: cp $dest/hardware/device.example.yaml /tmp/objects.yaml and edit it
  2. sudo -u gatelink $dest/bin/gatelink-device.mjs provision --cloud https://<your cloud> --code <code> \\
       --config /etc/gatelink/device.yaml --objects-from /tmp/objects.yaml
NEXT
