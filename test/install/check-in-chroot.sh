#!/usr/bin/env bash
# Checks hardware/install.sh as far as it can be without the board (docs/design.md section 12.2): in a clean
# Debian 13 "trixie" made with debootstrap (Raspberry Pi OS trixie's base, with Debian's Node.js 20), it installs
# the committed tree with hardware/install.sh, then as the gatelink user runs `gatelink-device --version` and
# `gatelink-device test` on simulated objects, and checks the unit with systemd-analyze. Runs twice, to show
# that install.sh can run again: the first over a tree installed before releases, the second as an update of a
# running daemon (a stand-in systemctl), which makes a second release, stops the daemon, switches
# /opt/gatelink/current to it, starts the daemon and keeps the first. Then it checks that what is installed holds no TypeScript compiler, none of the cloud's
# packages and no npm cache. Last, on a fresh system, it installs a release bundle (npm run release:device, as
# the operator's cloud serves it) with the bundle's own hardware/install.sh: Debian's Node.js and nothing to
# build, so no npm and no compiler on the board. Not part of npm test: it downloads a few hundred MB and takes
# minutes.
#   sudo bash test/install/check-in-chroot.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cache="$root/.cache/install"
base="$cache/trixie-base.tar"
chroot_dir="$(mktemp -d /tmp/gatelink-chroot.XXXXXX)"
started=$(date +%s)
say() { printf '\n== %s (%ss)\n' "$*" "$(($(date +%s) - started))"; }

cleanup() {
  for mount in dev/pts dev proc; do umount -l "$chroot_dir/$mount" 2>/dev/null || true; done
  rm -rf --one-file-system "$chroot_dir"
}
trap cleanup EXIT

mkdir -p "$cache"
if [ ! -f "$base" ]; then
  say "debootstrap trixie (once; kept in $base)"
  debootstrap --variant=minbase --include=ca-certificates,systemd trixie "$chroot_dir" http://deb.debian.org/debian
  tar -C "$chroot_dir" -cf "$base" .
else
  say "the trixie base from $base"
  tar -C "$chroot_dir" -xf "$base"
fi
chmod 0755 "$chroot_dir" # the root of the system in it (mktemp made it 0700): every user reaches /opt and /etc
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
# The certificate authorities this machine added itself (a network that inspects TLS), so that apt and npm in
# the chroot reach what they reach here.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$chroot_dir/usr/local/share/ca-certificates/"
  chroot "$chroot_dir" update-ca-certificates >/dev/null
fi
mount -t proc proc "$chroot_dir/proc"
mount --bind /dev "$chroot_dir/dev"
mount --bind /dev/pts "$chroot_dir/dev/pts"

say "the committed tree into /root/gatelink"
mkdir -p "$chroot_dir/root/gatelink"
git -C "$root" archive HEAD | tar -x -C "$chroot_dir/root/gatelink"

path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
say "a controller installed the way it was before releases (the whole tree in /opt/gatelink)"
mkdir -p "$chroot_dir/opt/gatelink/bin" "$chroot_dir/opt/gatelink/node_modules/typescript"
echo '{"name": "gatelink", "version": "0.0.1"}' >"$chroot_dir/opt/gatelink/package.json"
touch "$chroot_dir/opt/gatelink/bin/gatelink-device.mjs"

say "hardware/install.sh, first run: no systemd, as on a first boot"
chroot "$chroot_dir" env PATH="$path" bash /root/gatelink/hardware/install.sh

# A chroot runs no systemd. For the second run a stand-in systemctl says the daemon is running and notes each
# call with the release /opt/gatelink/current points at then: the update must stop the daemon on the old release
# and start it on the new one.
say "hardware/install.sh, second run: an update of a running daemon"
mkdir -p "$chroot_dir/run/systemd/system"
cat >"$chroot_dir/usr/local/sbin/systemctl" <<'STANDIN'
#!/bin/sh
echo "$* -> $(readlink /opt/gatelink/current)" >>/var/log/systemctl-calls
exit 0
STANDIN
chmod 0755 "$chroot_dir/usr/local/sbin/systemctl"
chroot "$chroot_dir" env PATH="$path" bash /root/gatelink/hardware/install.sh
rm -rf "$chroot_dir/usr/local/sbin/systemctl" "$chroot_dir/run/systemd"
cat "$chroot_dir/var/log/systemctl-calls"
first_release="$(ls "$chroot_dir/opt/gatelink/releases" | head -n 1)"
second_release="$(ls "$chroot_dir/opt/gatelink/releases" | tail -n 1)"
[ "$(grep -E '^(stop|start) ' "$chroot_dir/var/log/systemctl-calls")" = "$(printf '%s\n%s' \
  "stop gatelink-device -> releases/$first_release" "start gatelink-device -> releases/$second_release")" ] ||
  { echo "the update did not stop the daemon on the old release and start it on the new one"; exit 1; }

say "as the gatelink user: --version, and test on simulated objects"
chroot "$chroot_dir" runuser -u gatelink -- /opt/gatelink/current/bin/gatelink-device.mjs --version
# As systemd starts it: through the boot guard of the known-good release.
chroot "$chroot_dir" runuser -u gatelink -- node /opt/gatelink/known-good/bin/gatelink-boot.mjs --home /opt/gatelink --version
chroot "$chroot_dir" runuser -u gatelink -- node -e '
  const { generateKeyPairSync } = require("node:crypto");
  const fs = require("node:fs");
  const device = generateKeyPairSync("ed25519");
  const cloud = generateKeyPairSync("ed25519");
  fs.writeFileSync("/etc/gatelink/device-key.pem", device.privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  const raw = cloud.publicKey.export({ type: "spki", format: "der" }).subarray(-32).toString("base64");
  fs.writeFileSync("/etc/gatelink/device.yaml", [
    "cloud_url: https://gatelink.example.com", "device_id: D0000000000",
    "mqtt: {url: \"mqtts://gatelink.example.com:8883\", username: D0000000000, password: x}",
    "topic_prefix: gatelink", `command_key: ${raw}`,
    "objects:", "  - {id: gate, label: Main gate, kind: simulated, pulse_ms: 100}",
    "clock: {check: none}", ""].join("\n"), { mode: 0o600 });'
chroot "$chroot_dir" runuser -u gatelink -- /opt/gatelink/current/bin/gatelink-device.mjs test

say "what is installed: two releases, current the newer, no compiler, no cloud package, no npm cache"
releases="$(ls "$chroot_dir/opt/gatelink/releases")"
echo "$releases"
[ "$(echo "$releases" | wc -l)" = 2 ] || { echo "expected two releases (the current one and the one before)"; exit 1; }
[ "$(readlink "$chroot_dir/opt/gatelink/current")" = "releases/$(echo "$releases" | tail -n 1)" ] ||
  { echo "current does not point at the newer release"; exit 1; }
[ "$(readlink "$chroot_dir/opt/gatelink/known-good")" = "releases/$(echo "$releases" | tail -n 1)" ] ||
  { echo "known-good does not point at the newer release"; exit 1; }
[ "$(ls "$chroot_dir/opt/gatelink")" = "$(printf 'current\nknown-good\nreleases')" ] ||
  { echo "/opt/gatelink holds more than current, known-good and releases"; exit 1; }
# The daemon installs updates over the air in its home: the gatelink user's.
[ "$(chroot "$chroot_dir" stat -c %U /opt/gatelink /opt/gatelink/releases | sort -u)" = gatelink ] ||
  { echo "/opt/gatelink is not the gatelink user's"; exit 1; }
for package in typescript tsx fastify aedes @electric-sql/pglite sharp kysely pg; do
  [ ! -e "$chroot_dir/opt/gatelink/current/node_modules/$package" ] || { echo "$package is installed"; exit 1; }
done
[ ! -e "$chroot_dir/root/.npm/_cacache" ] || { echo "npm left its cache in /root/.npm"; exit 1; }
[ -z "$(ls -A "$chroot_dir/var/tmp")" ] || { echo "install.sh left files in /var/tmp"; exit 1; }
du -sh "$chroot_dir/opt/gatelink/current/"

say "systemd-analyze verify on the unit"
chroot "$chroot_dir" systemd-analyze verify /etc/systemd/system/gatelink-device.service

say "install from a clone checked: Node.js $(chroot "$chroot_dir" node --version) on Debian $(cat "$chroot_dir/etc/debian_version")"

# The path the guide gives a board: a release built here (as the operator's cloud hands it out), unpacked on a
# fresh system and installed by its own hardware/install.sh, with Debian's Node.js alone: no npm, no compiler.
say "a release bundle for this CPU, as the cloud serves it (npm run release:device)"
bundle="$cache/release.tar.gz"
rm -f "$bundle"
(cd "$root" && node packaging/device-release.mjs --out "$bundle" >/dev/null)
for mount in dev/pts dev proc; do umount -l "$chroot_dir/$mount" 2>/dev/null || true; done
rm -rf --one-file-system "$chroot_dir"
mkdir -p "$chroot_dir"
tar -C "$chroot_dir" -xf "$base"
chmod 0755 "$chroot_dir"
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$chroot_dir/usr/local/share/ca-certificates/"
  chroot "$chroot_dir" update-ca-certificates >/dev/null
fi
mount -t proc proc "$chroot_dir/proc"
mount --bind /dev "$chroot_dir/dev"
mount --bind /dev/pts "$chroot_dir/dev/pts"
mkdir -p "$chroot_dir/root/gatelink-release"
tar -xzf "$bundle" -C "$chroot_dir/root/gatelink-release"

say "the release's own hardware/install.sh on a fresh system"
chroot "$chroot_dir" env PATH="$path" bash /root/gatelink-release/hardware/install.sh
for tool in npm gcc g++ make; do
  ! chroot "$chroot_dir" env PATH="$path" sh -c "command -v $tool" >/dev/null ||
    { echo "installing a release brought $tool onto the board"; exit 1; }
done
chroot "$chroot_dir" runuser -u gatelink -- node /opt/gatelink/known-good/bin/gatelink-boot.mjs --home /opt/gatelink --version
[ "$(readlink "$chroot_dir/opt/gatelink/current")" = "$(readlink "$chroot_dir/opt/gatelink/known-good")" ] ||
  { echo "current and known-good differ after installing a release"; exit 1; }
[ -f "$chroot_dir/opt/gatelink/current/hardware/device.example.yaml" ] ||
  { echo "the example objects file is not beside the installed release"; exit 1; }
chroot "$chroot_dir" systemd-analyze verify /etc/systemd/system/gatelink-device.service
say "install from a release checked: Node.js $(chroot "$chroot_dir" node --version), $(du -sh "$chroot_dir/opt/gatelink/current/" | cut -f1) on the card"
