import { ACK_TIMEOUT_MS } from '../../shared/limits.js';
import type { CloudContext } from '../context.js';
import type { Broker } from './broker.js';
import { CommandWaiters } from './command-waiters.js';
import { CONNECTION_LIMITS, type ConnectionLimits } from './connection-limits.js';
import { DeviceMessages } from './device-messages.js';
import { startEmbeddedTransport } from './embedded-broker.js';
import { startExternalTransport } from './external-broker.js';
import { LinkBroker } from './link-broker.js';

export interface StartBrokerOptions {
  /** How long `dispatch` waits for the ack; default ACK_TIMEOUT_MS (decisions.md section 4). */
  ackTimeoutMs?: number;
  /** External broker only: how long to wait for its first answer before giving up; default 10 s. */
  connectTimeoutMs?: number;
  /** Embedded broker only: what one device connection may cost; default CONNECTION_LIMITS. */
  connectionLimits?: Partial<ConnectionLimits>;
}

/**
 * The controller link of `ctx.config.mqtt`: the embedded aedes (default) or the external broker at MQTT_URL.
 * Resolves once devices can connect (embedded) or the cloud is connected and subscribed (external).
 */
export async function startBroker(ctx: CloudContext, options: StartBrokerOptions = {}): Promise<Broker> {
  const waiters = new CommandWaiters();
  const messages = new DeviceMessages(ctx, waiters);
  const mqtt = ctx.config.mqtt;
  const transport =
    mqtt.kind === 'external'
      ? await startExternalTransport(ctx, {
          url: mqtt.url,
          publicUrl: mqtt.publicUrl,
          connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
          onMessage: messages.receive,
        })
      : await startEmbeddedTransport(ctx, {
          port: mqtt.port,
          publicUrl: mqtt.publicUrl,
          onMessage: messages.receive,
          limits: { ...CONNECTION_LIMITS, ...options.connectionLimits },
        });
  return new LinkBroker({
    ctx,
    transport,
    waiters,
    messages,
    ackTimeoutMs: options.ackTimeoutMs ?? ACK_TIMEOUT_MS,
  });
}
