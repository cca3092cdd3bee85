#!/bin/sh
# Prepares a running RabbitMQ cluster for Gatelink: the cloud's account, which may manage device accounts
# through the management API and read and write the topics the cloud needs. Device accounts are made by the
# cloud itself at provisioning. Safe to run again (for instance to change the cloud's password).
#
# Environment (see README.md beside this file):
#   RABBITMQ_API               the management API of any node (default http://127.0.0.1:15672)
#   RABBITMQ_ADMIN_USER        an administrator (default admin)
#   RABBITMQ_ADMIN_PASSWORD    its password (required)
#   CLOUD_USER                 the cloud's user name (default cloud)
#   CLOUD_PASSWORD             the cloud's password (required): the one in the cloud's MQTT_URL
#   MQTT_TOPIC_PREFIX          the cloud's MQTT_TOPIC_PREFIX (default gatelink)
set -eu

: "${RABBITMQ_ADMIN_PASSWORD:?set RABBITMQ_ADMIN_PASSWORD to an administrator password}"
: "${CLOUD_PASSWORD:?set CLOUD_PASSWORD to the password the cloud uses in MQTT_URL}"
api="${RABBITMQ_API:-http://127.0.0.1:15672}"
admin="${RABBITMQ_ADMIN_USER:-admin}"
cloud="${CLOUD_USER:-cloud}"
prefix="${MQTT_TOPIC_PREFIX:-gatelink}"
# MQTT topics are routing keys on amq.topic with / turned into . (the prefix holds only letters, digits, _, -).
key_prefix=$(printf '%s' "$prefix" | sed 's#/#\\\\.#g')

put() {
  answer=$(curl -sS -w '\n%{http_code}' -u "$admin:$RABBITMQ_ADMIN_PASSWORD" -X PUT \
    -H 'content-type: application/json' -d "$2" "$api/api/$1")
  case "$answer" in
    *2??) ;;
    *) echo "PUT $api/api/$1 answered: $answer" >&2; exit 1 ;;
  esac
}

# The administrator tag lets the cloud create and delete device users, set their rights and close their
# connections; keep MQTT_URL as secret as an administrator password.
put "users/$cloud" "{\"password\":\"$CLOUD_PASSWORD\",\"tags\":\"administrator\"}"
# Its own session queues (mqtt-subscription-<client id>qos0/1) and the MQTT exchange.
put "permissions/%2F/$cloud" '{"configure":"^mqtt-subscription-","write":"^(amq\\.topic|mqtt-subscription-.*)$","read":"^(amq\\.topic|mqtt-subscription-.*)$"}'
# Commands to every device; acknowledgements, states and telemetry of every device (a subscription with +
# is checked as the routing key pattern, with *).
put "topic-permissions/%2F/$cloud" "{\"exchange\":\"amq.topic\",\"write\":\"^$key_prefix\\\\.dev\\\\.[^.*#]+\\\\.cmd\$\",\"read\":\"^$key_prefix\\\\.dev\\\\.([^.*#]+|\\\\*)\\\\.(ack|state|telemetry)\$\"}"
# A device's session queue (clean session) is a durable classic queue on the node it connected to; when that
# node dies, the queue's record stays and a device reconnecting elsewhere cannot subscribe until the node comes
# back. Mirrored on every node, the queue moves to a surviving node instead. (Cloud instances' sessions are
# quorum queues, replicated anyway, which this policy leaves alone.)
put "policies/%2F/gatelink-device-sessions" '{"pattern":"^mqtt-subscription-","definition":{"ha-mode":"all","ha-sync-mode":"automatic"},"apply-to":"queues","priority":0}'
echo "the cloud's account $cloud is ready" >&2
