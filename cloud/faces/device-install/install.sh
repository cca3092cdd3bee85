#!/bin/sh
# Installs the Gatelink controller from the operator's cloud on a fresh Raspberry Pi OS (Debian 13 "trixie"):
#   curl -fsSL __CLOUD__/api/device/install | sudo sh
# Served by the cloud with its own address in place (docs/design.md section 12.4.4). It installs Debian's
# Node.js, fetches the release the operator rolled out to every controller for this board's CPU, checks the
# bundle against the release's SHA-256, unpacks it and runs the release's own hardware/install.sh, which puts it
# in /opt/gatelink and installs the systemd unit. Nothing is compiled on the board, and no npm is installed.
set -eu
cloud='__CLOUD__'
fail() {
  printf 'gatelink install: %s\n' "$*" >&2
  exit 1
}

# All of it in one function, read whole before it runs: piped into sh, a command that reads its input would
# otherwise eat the rest of the script.
main() {
  [ "$(id -u)" = 0 ] || fail "run it as root: curl -fsSL $cloud/api/device/install | sudo sh"
  case "$(uname -m)" in
  aarch64 | arm64) arch=arm64 ;;
  x86_64 | amd64) arch=x64 ;;
  *) fail "this board's CPU ($(uname -m)) has no Gatelink release: a Raspberry Pi needs the 64-bit Raspberry Pi OS" ;;
  esac

  echo "==> Debian packages: ca-certificates, curl, nodejs (no recommends)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ca-certificates curl nodejs >/dev/null

  work="$(mktemp -d /var/tmp/gatelink-release.XXXXXX)"
  trap 'rm -rf "$work"' EXIT
  echo "==> the release for $arch from $cloud"
  curl -fsS "$cloud/api/device/releases/latest/$arch" -o "$work/latest.json" ||
    fail "the cloud has no release for $arch to give (above); ask the operator to roll one out to all controllers"
  # One line: version, SHA-256, size and address of the bundle (node is there now; no jq on a fresh system).
  node -e '
    const latest = require(process.argv[1]);
    const { version, sha256, size } = latest.release;
    console.log([version, sha256, size, latest.url].join(" "));
  ' "$work/latest.json" >"$work/latest.txt"
  read -r version sha256 size url <"$work/latest.txt"
  echo "==> gatelink-device $version ($size bytes)"
  curl -fS --progress-bar "$url" -o "$work/release.tar.gz" || fail "the download failed (above); run this again"
  [ "$(sha256sum "$work/release.tar.gz" | cut -d' ' -f1)" = "$sha256" ] ||
    fail "the bundle does not match the release's SHA-256: it was changed on the way; run this again, then tell the operator"
  mkdir "$work/release"
  tar -xzf "$work/release.tar.gz" -C "$work/release" --no-same-owner --no-same-permissions
  bash "$work/release/hardware/install.sh"
}

main </dev/null
