// The baseline of `npm run bench -- device`: a bare node process that connects to the broker with mqtt.js the way
// the controller does (the same account, client id, keepalive, clean session and will) and subscribes to the
// controller's command topic, and does nothing else. Run with plain node, as the daemon is.
import mqtt from 'mqtt';

const env = process.env;
const client = mqtt.connect(env.BENCH_MQTT_URL, {
  clientId: env.BENCH_MQTT_CLIENT_ID,
  username: env.BENCH_MQTT_USERNAME,
  password: env.BENCH_MQTT_PASSWORD,
  clean: true,
  keepalive: Number(env.BENCH_MQTT_KEEPALIVE_S ?? 30),
  reconnectPeriod: 0,
  connectTimeout: 10_000,
  will: {
    topic: env.BENCH_MQTT_WILL_TOPIC,
    payload: Buffer.from(env.BENCH_MQTT_WILL ?? ''),
    qos: 1,
    retain: true,
  },
});
client.on('connect', () => {
  client.subscribe(env.BENCH_MQTT_TOPIC, { qos: 1 });
});
client.on('error', (error) => {
  process.stderr.write(`bare client: ${error.message}\n`);
});
process.once('SIGTERM', () => {
  client.end(false, () => process.exit(0));
});
