#!/bin/sh
# Installs the Gatelink controller on an Android phone, in Termux, from the operator's cloud, for a gate that
# opens on a call from the phone:
#   curl -fsSL __CLOUD__/api/device/install/phone | sh -s -- SET-UP-CODE
# The customer's barriers page gives the command with their one-time code in it (docs/design.md section 9.3).
# It installs Termux's Node.js and Termux:API's commands, fetches the release rolled out to every controller
# for the phone's CPU, checks the bundle against the release's SHA-256, unpacks it under ~/.gatelink, asks for
# the gate's number and a name (gatelink-device provision --phone), which pairs the phone to the account whose
# code it is, and starts the controller now and, through Termux:Boot, whenever the phone starts.
# GATELINK_GATE_NUMBER and GATELINK_GATE_NAME answer the two questions without a terminal.
set -eu
cloud='__CLOUD__'
fail() {
  printf 'gatelink install: %s\n' "$*" >&2
  exit 1
}

# All of it in one function, read whole before it runs: piped into sh, a command that reads its input would
# otherwise eat the rest of the script.
main() {
  code="${1:-}"
  [ -n "$code" ] || fail "the set-up code is missing: copy the whole command from your Gatelink barriers page"
  { [ -n "${PREFIX:-}" ] && command -v pkg >/dev/null 2>&1; } ||
    fail "run it in Termux on the phone that calls the gate (Termux from F-Droid)"
  case "$(uname -m)" in
  aarch64 | arm64) arch=arm64 ;;
  x86_64 | amd64) arch=x64 ;;
  *) fail "this phone's CPU ($(uname -m)) has no Gatelink release: a phone with a 64-bit Android is needed" ;;
  esac
  home="${GATELINK_HOME:-$HOME/.gatelink}"

  echo "==> Termux packages: nodejs-lts, termux-api"
  pkg install -y nodejs-lts termux-api >/dev/null ||
    fail "pkg could not install nodejs-lts and termux-api (above); run pkg upgrade, then this again"

  mkdir -p "$home/releases" "$home/state"
  tmp="${TMPDIR:-$PREFIX/tmp}"
  mkdir -p "$tmp"
  work="$(mktemp -d "$tmp/gatelink-release.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  echo "==> the release for $arch from $cloud"
  curl -fsS "$cloud/api/device/releases/latest/$arch" -o "$work/latest.json" ||
    fail "the cloud has no release for $arch to give (above); tell the operator of your Gatelink service"
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
  release="$home/releases/$version"
  rm -rf "$release.new"
  mkdir "$release.new"
  tar -xzf "$work/release.tar.gz" -C "$release.new" --no-same-owner
  rm -rf "$release"
  mv "$release.new" "$release"
  ln -sfn "$release" "$home/current"

  stop_running "$home"
  if [ -s "$home/device.yaml" ]; then
    echo "==> this phone is set up already ($home/device.yaml): starting it again with the new release"
  else
    echo "==> your gate"
    provision "$home" "$code"
  fi
  start_on_boot "$home"
  echo "==> starting the controller (its log: $home/controller.log)"
  nohup sh "$HOME/.termux/boot/gatelink" >/dev/null 2>&1 &
  echo "Done. This phone now calls your gate when a company you let in opens it."
  echo "Keep Termux installed and its battery use unrestricted; your barrier's page shows when the phone was last online."
}

# The gate's number and name: asked at the terminal, or from the environment (GATELINK_GATE_NUMBER, _NAME).
provision() {
  set -- "$home/current/bin/gatelink-device.mjs" provision --phone --cloud "$cloud" --code "$2" \
    --config "$1/device.yaml" --state-dir "$1/state"
  if [ -n "${GATELINK_GATE_NUMBER:-}" ]; then
    node "$@" --number "$GATELINK_GATE_NUMBER" --label "${GATELINK_GATE_NAME:-Gate}"
  else
    node "$@" </dev/tty
  fi
}

# A controller started by an earlier run of this script is stopped, so that one runs at a time.
stop_running() {
  if [ -s "$1/controller.pid" ]; then
    kill "$(cat "$1/controller.pid")" 2>/dev/null || true
    rm -f "$1/controller.pid"
  fi
}

# Termux:Boot runs ~/.termux/boot/* when the phone starts; the same script starts it now. The wake lock keeps
# Android from suspending Termux while the controller waits for commands.
start_on_boot() {
  mkdir -p "$HOME/.termux/boot"
  cat >"$HOME/.termux/boot/gatelink" <<BOOT
#!$PREFIX/bin/sh
termux-wake-lock
echo \$\$ >'$1/controller.pid'
exec node '$1/current/bin/gatelink-device.mjs' run --config '$1/device.yaml' >>'$1/controller.log' 2>&1
BOOT
  chmod 700 "$HOME/.termux/boot/gatelink"
}

main "$@" </dev/null
