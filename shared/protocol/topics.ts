/**
 * MQTT topics (docs/design.md section 7). Everything lives under a configurable prefix so that several
 * deployments can share one broker: `<prefix>/dev/<device_id>/{cmd,ack,state,telemetry}`.
 */
export const DEVICE_CHANNELS = ['cmd', 'ack', 'state', 'telemetry'] as const;
export type DeviceChannel = (typeof DEVICE_CHANNELS)[number];

/** Device ids double as MQTT client ids and topic levels: no `+`, `#`, `/` or anything outside this. */
export const DEVICE_ID_PATTERN = /^D[0-9A-HJKMNP-TV-Z]{10}$/;
/** A prefix is one or more plain topic levels: no wildcards, no `$`, no empty level. */
export const TOPIC_PREFIX_PATTERN = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/;

export function isDeviceId(value: string): boolean {
  return DEVICE_ID_PATTERN.test(value);
}

export function deviceTopic(prefix: string, deviceId: string, channel: DeviceChannel): string {
  return `${prefix}/dev/${deviceId}/${channel}`;
}

/** The wildcard the cloud subscribes to for one channel of every device. */
export function allDevicesTopic(prefix: string, channel: DeviceChannel): string {
  return `${prefix}/dev/+/${channel}`;
}

/** Splits a concrete topic into device id and channel, or returns null when it is not a device topic. */
export function parseDeviceTopic(
  prefix: string,
  topic: string,
): { deviceId: string; channel: DeviceChannel } | null {
  const head = `${prefix}/dev/`;
  if (!topic.startsWith(head)) return null;
  const rest = topic.slice(head.length).split('/');
  if (rest.length !== 2) return null;
  const [deviceId, channel] = rest as [string, string];
  if (!isDeviceId(deviceId)) return null;
  if (!(DEVICE_CHANNELS as readonly string[]).includes(channel)) return null;
  return { deviceId, channel: channel as DeviceChannel };
}
