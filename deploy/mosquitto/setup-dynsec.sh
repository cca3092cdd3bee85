#!/bin/sh
# Prepares a running Mosquitto (dynamic security plugin) for Gatelink: refuse by default, and give the
# cloud's account its role. Device accounts are made by the cloud itself at provisioning. Safe to run again:
# the role gets its rules re-added once, the cloud's account the password given now.
#
# Environment (see README.md beside this file):
#   MQTT_HOST, MQTT_PORT       the broker (default 127.0.0.1:1883, the plain listener on loopback)
#   MQTT_CAFILE                the CA of the broker's certificate: talks TLS (the listener on 8883), checking
#                              that the certificate is for MQTT_HOST
#   MQTT_CAPATH                or a folder of CAs, such as /etc/ssl/certs for a public CA (Let's Encrypt)
#   MQTT_CONNECT_TIMEOUT       seconds to wait for each answer before giving up (default 10)
#   DYNSEC_ADMIN_USER          the admin made by `mosquitto_ctrl dynsec init` (default admin)
#   DYNSEC_ADMIN_PASSWORD      its password (required)
#   CLOUD_USER                 the cloud's user name (default cloud)
#   CLOUD_PASSWORD             the cloud's password (required): the one in the cloud's MQTT_URL
#   MQTT_TOPIC_PREFIX          the cloud's MQTT_TOPIC_PREFIX (default gatelink)
set -eu

: "${DYNSEC_ADMIN_PASSWORD:?set DYNSEC_ADMIN_PASSWORD to the dynsec admin password}"
: "${CLOUD_PASSWORD:?set CLOUD_PASSWORD to the password the cloud uses in MQTT_URL}"
host="${MQTT_HOST:-127.0.0.1}"
port="${MQTT_PORT:-1883}"
wait="${MQTT_CONNECT_TIMEOUT:-10}"
admin="${DYNSEC_ADMIN_USER:-admin}"
cloud="${CLOUD_USER:-cloud}"
prefix="${MQTT_TOPIC_PREFIX:-gatelink}"

# One mosquitto_ctrl command, over TLS when a CA is given. `timeout` ends it when the broker never answers (a
# plain client on the TLS port, or a firewall that drops), which mosquitto_ctrl would wait for forever.
send() {
  if [ -n "${MQTT_CAFILE:-}" ]; then
    set -- --cafile "$MQTT_CAFILE" "$@"
  elif [ -n "${MQTT_CAPATH:-}" ]; then
    set -- --capath "$MQTT_CAPATH" "$@"
  fi
  timeout "$wait" mosquitto_ctrl -h "$host" -p "$port" "$@"
}

# mosquitto_ctrl exits 0 even when the broker refuses a command, so its answer is read instead.
# The first argument is an error this step tolerates ('' for none).
ctrl() {
  tolerated="$1"
  shift
  status=0
  answer=$(send -u "$admin" -P "$DYNSEC_ADMIN_PASSWORD" dynsec "$@" 2>&1) || status=$?
  if [ "$status" -eq 124 ]; then
    echo "no answer from Mosquitto at $host:$port within $wait s: check MQTT_HOST and MQTT_PORT, and give" \
      "MQTT_CAFILE (or MQTT_CAPATH) for its TLS listener, or none for the plain one" >&2
    exit 1
  fi
  answer=$(printf '%s\n' "$answer" |
    grep -v -e 'without encryption' -e 'visible on the network' -e '^$' || true)
  case "$answer" in
    *rror*)
      if [ -n "$tolerated" ] && echo "$answer" | grep -q "$tolerated"; then return 0; fi
      echo "mosquitto_ctrl dynsec $1 failed: $answer" >&2
      case "$answer" in
        *TLS* | *certificate* | *SSL*)
          echo "the broker's certificate must be for $host and signed by the CA in MQTT_CAFILE" >&2
          ;;
      esac
      exit 1
      ;;
  esac
}

# Over TLS, the broker's certificate is checked first, with openssl: mosquitto_ctrl reports a certificate it
# does not trust with "A TLS error occurred" at best, and at worst waits until the timeout.
verify_certificate() {
  command -v openssl >/dev/null 2>&1 || return 0
  case "$host" in
    *[!0-9.]*) name="-verify_hostname $host" ;;
    *) name="-verify_ip $host" ;;
  esac
  if [ -n "${MQTT_CAFILE:-}" ]; then trust="-CAfile $MQTT_CAFILE"; else trust="-CApath $MQTT_CAPATH"; fi
  # $name and $trust are split on purpose: an option and its value each.
  # shellcheck disable=SC2086
  if ! report=$(timeout "$wait" openssl s_client -connect "$host:$port" -verify_return_error $name $trust \
    </dev/null 2>&1); then
    reason=$(printf '%s\n' "$report" | grep -m 1 -i 'verify error' || echo 'no TLS handshake')
    echo "the broker's certificate at $host:$port does not verify ($reason): the certificate must be for" \
      "$host and signed by the CA in MQTT_CAFILE (or one in MQTT_CAPATH)" >&2
    exit 1
  fi
}
if [ -n "${MQTT_CAFILE:-}${MQTT_CAPATH:-}" ]; then verify_certificate; fi

# Each rule is removed first (when present) so that running this again leaves one copy.
rule() {
  ctrl 'not found' removeRoleACL "$1" "$2" "$3"
  ctrl '' addRoleACL "$@"
}

# Whatever no role allows is refused. (Mosquitto 2.0.11 ignores the publishClientReceive default; nothing
# depends on it, since a client receives only what it may subscribe to.)
ctrl '' setDefaultACLAccess publishClientSend deny
ctrl '' setDefaultACLAccess publishClientReceive deny
ctrl '' setDefaultACLAccess subscribe deny
ctrl '' setDefaultACLAccess unsubscribe allow

# The cloud: commands to every device, everything devices report, and device accounts (the cloud makes
# one client and one role per device, holding that device's own topics, when it is provisioned).
ctrl 'already exists' createRole cloud
rule cloud publishClientSend "$prefix/dev/+/cmd" allow
for channel in ack state telemetry; do
  rule cloud subscribePattern "$prefix/dev/+/$channel" allow
  rule cloud publishClientReceive "$prefix/dev/+/$channel" allow
done
rule cloud publishClientSend '$CONTROL/dynamic-security/v1' allow
rule cloud subscribeLiteral '$CONTROL/dynamic-security/v1/response' allow
rule cloud publishClientReceive '$CONTROL/dynamic-security/v1/response' allow

ctrl 'already exists' createClient "$cloud" -p "$CLOUD_PASSWORD"
ctrl '' setClientPassword "$cloud" "$CLOUD_PASSWORD"
ctrl 'not found' removeClientRole "$cloud" cloud
ctrl '' addClientRole "$cloud" cloud
echo "Mosquitto is ready for Gatelink: role cloud, account $cloud, topics under $prefix/."
