import { deviceTopic } from '../../../shared/protocol/topics.js';
import { devicePublishTopics } from './device-access.js';
import type { DeviceAccounts } from './device-accounts.js';

export interface RabbitmqAccountsOptions {
  /** The management API of each node (RABBITMQ_API_URL); a request goes to the next one when a node is down. */
  apiUrls: readonly string[];
  /** The cloud's own account, an administrator (the user name and password of MQTT_URL). */
  username: string;
  password: string;
  prefix: string;
  timeoutMs: number;
}

export class RabbitmqApiError extends Error {
  override name = 'RabbitmqApiError';
}

/**
 * Device accounts on a RabbitMQ 3.10 cluster through its management HTTP API (deploy/rabbitmq/README.md):
 * a user named after the device with the device's password, and rights that hold exactly ./device-access.ts.
 * Users and rights live in the cluster's shared database: made through any node, they hold on every node at
 * once, without a restart.
 *
 * MQTT topics are routing keys on the exchange amq.topic with `/` turned into `.`; a subscription is checked
 * as its binding key (`+` is `*`, `#` stays), so a filter with a wildcard never equals the one key allowed.
 * A device's session queue is `mqtt-subscription-<client id>qos0|1`, and the device may only configure and read
 * its own: a connection under another client id cannot subscribe at all (docs/design.md section 7.2).
 */
export function rabbitmqAccounts(options: RabbitmqAccountsOptions): DeviceAccounts {
  const api = new ManagementApi(options);
  return {
    answerTopics: [],
    receive: () => false,
    async put(deviceId, password) {
      const user = encodeURIComponent(deviceId);
      const queues = `mqtt-subscription-${escapeRegex(deviceId)}qos[01]`;
      await api.call('PUT', `users/${user}`, { password, tags: '' });
      await api.call('PUT', `permissions/%2F/${user}`, {
        configure: `^${queues}$`,
        write: `^(amq\\.topic|${queues})$`,
        read: `^(amq\\.topic|${queues})$`,
      });
      // Without topic permissions on an exchange, RabbitMQ allows every routing key there: these are set always.
      await api.call('PUT', `topic-permissions/%2F/${user}`, {
        exchange: 'amq.topic',
        write: anyOf(devicePublishTopics(options.prefix, deviceId)),
        read: anyOf([deviceTopic(options.prefix, deviceId, 'cmd')]),
      });
      // A new password does not end a session opened with the former one.
      await api.call('DELETE', `connections/username/${user}`, undefined, [404]);
    },
    async remove(deviceId) {
      const user = encodeURIComponent(deviceId);
      await api.call('DELETE', `users/${user}`, undefined, [404]);
      await api.call('DELETE', `connections/username/${user}`, undefined, [404]);
    },
  };
}

/** A regular expression matching exactly the routing keys of these MQTT topics. */
function anyOf(topics: readonly string[]): string {
  return `^(${topics.map((topic) => escapeRegex(topic.replaceAll('/', '.'))).join('|')})$`;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The management API of the cluster, tried node by node: any node answers for the whole cluster. */
class ManagementApi {
  readonly #options: RabbitmqAccountsOptions;
  readonly #authorization: string;
  /** The node that answered last, tried first next time. */
  #current = 0;

  constructor(options: RabbitmqAccountsOptions) {
    this.#options = options;
    this.#authorization = `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`;
  }

  async call(method: string, path: string, body?: unknown, tolerated: number[] = []): Promise<void> {
    const urls = this.#options.apiUrls;
    let unreachable: unknown;
    for (let attempt = 0; attempt < urls.length; attempt++) {
      const index = (this.#current + attempt) % urls.length;
      let answer: Response;
      try {
        answer = await fetch(new URL(`api/${path}`, withSlash(urls[index]!)), {
          method,
          headers: { authorization: this.#authorization, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(this.#options.timeoutMs),
        });
      } catch (error) {
        unreachable = error;
        continue;
      }
      // A node that is up but not serving (starting, or cut off from the others) answers 5xx: try the next.
      if (answer.status >= 500) {
        unreachable = new RabbitmqApiError(`${method} ${path} answered ${answer.status}`);
        continue;
      }
      this.#current = index;
      if (answer.ok || tolerated.includes(answer.status)) return;
      throw new RabbitmqApiError(
        `the RabbitMQ management API refused ${method} ${path}: ${answer.status} ${await answer.text()}`,
      );
    }
    throw new RabbitmqApiError(`no RabbitMQ management API in RABBITMQ_API_URL answered ${method} ${path}`, {
      cause: unreachable,
    });
  }
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
