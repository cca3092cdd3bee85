import { deviceTopic, parseDeviceTopic } from '../../../shared/protocol/topics.js';

/**
 * What a device may do on the broker (docs/design.md section 7): subscribe to exactly its own `cmd`, publish to
 * its own `ack`, `state` and `telemetry`, and retain only `state`. The embedded broker applies these checks;
 * the external one gets the same rules as a dynamic-security role (./dynamic-security.ts).
 */
export function deviceMaySubscribe(prefix: string, deviceId: string, filter: string): boolean {
  // A plain comparison: a filter with `+` or `#`, or any other topic, is never equal to it.
  return filter === deviceTopic(prefix, deviceId, 'cmd');
}

export function deviceMayPublish(prefix: string, deviceId: string, topic: string, retain: boolean): boolean {
  const target = parseDeviceTopic(prefix, topic);
  if (!target || target.deviceId !== deviceId) return false;
  if (target.channel === 'cmd') return false;
  return !retain || target.channel === 'state';
}

/** The topics a device may publish to, for the external broker's per-device role. */
export function devicePublishTopics(prefix: string, deviceId: string): string[] {
  return [
    deviceTopic(prefix, deviceId, 'ack'),
    deviceTopic(prefix, deviceId, 'state'),
    deviceTopic(prefix, deviceId, 'telemetry'),
  ];
}
