import { ACK_TIMEOUT_MS } from '../../../shared/limits.js';
import { brokerUrls } from '../../../shared/protocol/broker-urls.js';
import type { CloudContext } from '../../foundation/context.js';
import { UpdateDelivery } from '../../rules/rollouts/update-delivery.js';
import { CommandWaiters } from './command-waiters.js';
import { CONNECTION_LIMITS, type ConnectionLimits } from './connection-limits.js';
import type { ControllerLink } from './controller-link.js';
import { DeviceMessages } from './device-messages.js';
import { startEmbeddedTransport } from './embedded-broker.js';
import { startExternalTransport } from './external-broker.js';
import { LinkBroker } from './link-broker.js';
import { rabbitmqAccounts } from './rabbitmq-accounts.js';
import { REDELIVERY_DELAYS, type RedeliveryDelays } from './redelivery-backoff.js';
import { SandboxController, type SandboxGateTimes } from './sandbox-controller.js';
import type { BrokerTransport, DeviceMessageListener } from './transport.js';

export interface TransportOptions {
  /** External broker only: how long to wait for its first answer before giving up; default 10 s. */
  connectTimeoutMs?: number;
  /** Embedded broker only: what one device connection may cost; default CONNECTION_LIMITS. */
  connectionLimits?: Partial<ConnectionLimits>;
  /** External broker only: the back-off after a message the cloud could not take; default REDELIVERY_DELAYS. */
  redeliveryDelays?: Partial<RedeliveryDelays>;
  /** Embedded broker with TLS only: how often its certificate files are read again; default one minute. */
  certificatePollMs?: number;
}

export interface ControllerLinkOptions extends TransportOptions {
  /** How long `dispatch` waits for the ack; default ACK_TIMEOUT_MS (cloud/README.md, "Opening"). */
  ackTimeoutMs?: number;
  /** When the sandbox gates move (./sandbox-controller.ts); default SANDBOX_GATE_TIMES. */
  sandboxGate?: SandboxGateTimes;
  /** How long an update command waits for a report before it goes again; default DEFAULT_RESEND_AFTER_MS. */
  resendAfterMs?: number;
}

/**
 * The controller link of `ctx.config.mqtt`: the embedded aedes (default) or the external broker at MQTT_URL.
 * Resolves once devices can connect (embedded) or the cloud is connected and subscribed (external).
 */
export async function startControllerLink(
  ctx: CloudContext,
  options: ControllerLinkOptions = {},
): Promise<ControllerLink> {
  const waiters = new CommandWaiters();
  let link: LinkBroker | undefined;
  const updates = new UpdateDelivery(
    ctx,
    () => link ?? { sendUpdate: async () => false },
    options.resendAfterMs === undefined ? {} : { resendAfterMs: options.resendAfterMs },
  );
  const messages = new DeviceMessages(ctx, waiters, updates);
  const transport = await startTransport(ctx, messages.receive, options);
  link = new LinkBroker({
    ctx,
    transport,
    waiters,
    messages,
    updates,
    ackTimeoutMs: options.ackTimeoutMs ?? ACK_TIMEOUT_MS,
    sandbox: new SandboxController(ctx, messages.receive, options.sandboxGate),
  });
  return link;
}

/** The transport of `ctx.config.mqtt`, handing what devices publish to `onMessage`. */
export function startTransport(
  ctx: CloudContext,
  onMessage: DeviceMessageListener,
  options: TransportOptions = {},
): Promise<BrokerTransport> {
  const mqtt = ctx.config.mqtt;
  if (mqtt.kind === 'external') {
    const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    const accounts = mqtt.accounts;
    return startExternalTransport(ctx, {
      url: mqtt.url,
      // A RabbitMQ cluster keeps device accounts behind its management API, with the cloud's own account.
      accounts:
        accounts.kind === 'rabbitmq'
          ? () =>
              rabbitmqAccounts({
                apiUrls: accounts.apiUrls,
                ...cloudAccount(mqtt.url),
                prefix: ctx.config.topicPrefix,
                timeoutMs: connectTimeoutMs,
              })
          : undefined,
      publicUrl: mqtt.publicUrl,
      caFile: mqtt.caFile,
      clientId: mqtt.clientId,
      connectTimeoutMs,
      onMessage,
      redeliveryDelays: { ...REDELIVERY_DELAYS, ...options.redeliveryDelays },
    });
  }
  return startEmbeddedTransport(ctx, {
    port: mqtt.port,
    publicUrl: mqtt.publicUrl,
    tls: mqtt.tls,
    plainHost: mqtt.plainHost,
    onMessage,
    limits: { ...CONNECTION_LIMITS, ...options.connectionLimits },
    ...(options.certificatePollMs ? { certificatePollMs: options.certificatePollMs } : {}),
  });
}

/** The cloud's user name and password, from the first URL of MQTT_URL. */
function cloudAccount(list: string): { username: string; password: string } {
  const first = new URL(brokerUrls(list)[0] ?? list);
  return { username: decodeURIComponent(first.username), password: decodeURIComponent(first.password) };
}
