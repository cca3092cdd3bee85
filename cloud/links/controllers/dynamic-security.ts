import { randomUUID } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import { deviceTopic } from '../../../shared/protocol/topics.js';
import { devicePublishTopics } from './device-access.js';
import type { DeviceAccounts } from './device-accounts.js';

/**
 * Device accounts on an external Mosquitto through its dynamic security plugin: JSON commands published on
 * `$CONTROL/dynamic-security/v1`, answers on `.../response`, matched by `correlationData`.
 *
 * Each device gets a client (user name = device id, client id pinned to it) and a role of its own holding
 * its topics literally. Mosquitto 2.0's plugin does not substitute `%u`/`%c` in role rules (2.0.11 never
 * matches them), so one shared pattern role cannot express "its own topics" there.
 */
export const DYNSEC_TOPIC = '$CONTROL/dynamic-security/v1';
export const DYNSEC_RESPONSE_TOPIC = `${DYNSEC_TOPIC}/response`;

interface DynsecCommand {
  command: string;
  [field: string]: unknown;
}

interface DynsecResponse {
  command: string;
  error?: string;
  correlationData?: string;
}

export class DynsecError extends Error {
  override name = 'DynsecError';
}

export function deviceRoleName(deviceId: string): string {
  return `gatelink-device-${deviceId}`;
}

/** Device accounts on Mosquitto, answered on the dynamic security response topic. */
export function dynsecAccounts(client: MqttClient, prefix: string, timeoutMs: number): DeviceAccounts {
  const dynsec = new DynamicSecurity(client, timeoutMs);
  return {
    answerTopics: [DYNSEC_RESPONSE_TOPIC],
    receive(topic, payload) {
      if (topic !== DYNSEC_RESPONSE_TOPIC) return false;
      dynsec.receive(payload);
      return true;
    },
    put: (deviceId, password) => dynsec.putDevice(prefix, deviceId, password),
    remove: (deviceId) => dynsec.deleteDevice(deviceId),
  };
}

export class DynamicSecurity {
  readonly #client: MqttClient;
  readonly #timeoutMs: number;
  readonly #pending = new Map<string, (response: DynsecResponse) => void>();

  constructor(client: MqttClient, timeoutMs: number) {
    this.#client = client;
    this.#timeoutMs = timeoutMs;
  }

  /** Takes a message from the response topic. Other instances' answers arrive too, and are ignored. */
  receive(payload: Buffer): void {
    let responses: unknown;
    try {
      responses = (JSON.parse(payload.toString('utf8')) as { responses?: unknown }).responses;
    } catch {
      return;
    }
    if (!Array.isArray(responses)) return;
    for (const response of responses as DynsecResponse[]) {
      const resolve = response.correlationData ? this.#pending.get(response.correlationData) : undefined;
      resolve?.(response);
    }
  }

  /** Replaces the device's account: the old client (and its session) and role go, new ones are made. */
  async putDevice(prefix: string, deviceId: string, password: string): Promise<void> {
    const rolename = deviceRoleName(deviceId);
    const acls = [
      { acltype: 'subscribeLiteral', topic: deviceTopic(prefix, deviceId, 'cmd'), allow: true },
      { acltype: 'publishClientReceive', topic: deviceTopic(prefix, deviceId, 'cmd'), allow: true },
      ...devicePublishTopics(prefix, deviceId).map((topic) => ({
        acltype: 'publishClientSend',
        topic,
        allow: true,
      })),
    ];
    await this.run(
      [
        { command: 'deleteClient', username: deviceId },
        { command: 'deleteRole', rolename },
        { command: 'createRole', rolename, acls },
        { command: 'createClient', username: deviceId, password, clientid: deviceId, roles: [{ rolename }] },
      ],
      ['Client not found', 'Role not found'],
    );
  }

  /** Deletes the device's client, which ends its session, and its role. */
  async deleteDevice(deviceId: string): Promise<void> {
    await this.run(
      [
        { command: 'deleteClient', username: deviceId },
        { command: 'deleteRole', rolename: deviceRoleName(deviceId) },
      ],
      ['Client not found', 'Role not found'],
    );
  }

  /** Runs the commands in order (the plugin takes them as one batch); throws on an error not tolerated. */
  async run(commands: DynsecCommand[], tolerated: string[] = []): Promise<void> {
    const batch = randomUUID();
    const tagged = commands.map((command, i) => ({ ...command, correlationData: `${batch}:${i}` }));
    const answers = tagged.map((command) => this.#answer(command.correlationData));
    try {
      await this.#client.publishAsync(DYNSEC_TOPIC, JSON.stringify({ commands: tagged }), { qos: 1 });
      const responses = await Promise.all(answers.map((answer) => answer.response));
      for (const response of responses) {
        if (response.error && !tolerated.includes(response.error)) {
          throw new DynsecError(`the broker refused ${response.command}: ${response.error}`);
        }
      }
    } finally {
      for (const answer of answers) answer.cancel();
    }
  }

  #answer(correlationData: string): { response: Promise<DynsecResponse>; cancel(): void } {
    let timer: NodeJS.Timeout | undefined;
    const response = new Promise<DynsecResponse>((resolve, reject) => {
      this.#pending.set(correlationData, resolve);
      timer = setTimeout(
        () => reject(new DynsecError('the broker did not answer a dynamic-security command in time')),
        this.#timeoutMs,
      );
    });
    // A rejection after another answer already failed the batch must not go unhandled.
    response.catch(() => {});
    return {
      response,
      cancel: () => {
        clearTimeout(timer);
        this.#pending.delete(correlationData);
      },
    };
  }
}
