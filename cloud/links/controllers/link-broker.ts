import type { Command } from '../../../shared/protocol/messages.js';
import { deviceTopic } from '../../../shared/protocol/topics.js';
import type { UpdateCommand } from '../../../shared/protocol/updates.js';
import type { CloudContext } from '../../foundation/context.js';
import {
  type DispatchRequest,
  type DispatchResult,
  signOpenCommand,
} from '../../rules/opening/dispatcher.js';
import type { UpdateDelivery } from '../../rules/rollouts/update-delivery.js';
import type { CommandWaiters } from './command-waiters.js';
import type { ControllerLink } from './controller-link.js';
import type { DeviceMessages } from './device-messages.js';
import type { SandboxController } from './sandbox-controller.js';
import { type BrokerTransport, NotConnectedError } from './transport.js';

export interface LinkBrokerOptions {
  ctx: CloudContext;
  transport: BrokerTransport;
  waiters: CommandWaiters;
  messages: DeviceMessages;
  ackTimeoutMs: number;
  updates: UpdateDelivery;
  /** The controllers the cloud runs for sandbox barriers (docs/design.md section 11.9). */
  sandbox: SandboxController;
}

/** The controller link on top of either transport: signed commands out, verified acks back. */
export class LinkBroker implements ControllerLink {
  readonly #options: LinkBrokerOptions;
  #stopped = false;

  constructor(options: LinkBrokerOptions) {
    this.#options = options;
  }

  get deviceUrl(): string {
    return this.#options.transport.deviceUrl;
  }

  sign(request: DispatchRequest): Command {
    const { ctx } = this.#options;
    return signOpenCommand(ctx.serviceKey, request, ctx.clock.now().getTime());
  }

  /**
   * Nothing is sent to a device without a session (a gate must not open minutes later). Otherwise the signed
   * command goes out QoS 1, not retained, and the answer is its ack or, after the deadline, a timeout.
   */
  get updates(): UpdateDelivery {
    return this.#options.updates;
  }

  /**
   * An update command goes out QoS 1 to a connected controller, without waiting: the controller answers with
   * the progress in its retained state, not with an ack.
   */
  async sendUpdate(command: UpdateCommand): Promise<boolean> {
    const { ctx, transport } = this.#options;
    if (this.#stopped || !(await transport.isConnected(command.device_id))) return false;
    try {
      await transport.publish(
        deviceTopic(ctx.config.topicPrefix, command.device_id, 'cmd'),
        Buffer.from(JSON.stringify(command)),
      );
      return true;
    } catch (error) {
      if (error instanceof NotConnectedError) return false;
      throw error;
    }
  }

  journalWritten(commandId: string): Promise<unknown> | undefined {
    return this.#options.waiters.journalWritten(commandId);
  }

  async send(command: Command): Promise<DispatchResult> {
    const { ctx, transport, waiters, ackTimeoutMs } = this.#options;
    const deviceId = command.device_id;
    if (this.#stopped) return { kind: 'offline' };
    if (!(await transport.isConnected(deviceId))) return this.#sendToSandbox(command);
    // Waiting starts before sending, so an ack cannot arrive unheard. A publish still unconfirmed when the
    // deadline passes (the broker connection dropped) does not hold the answer back.
    const answer = waiters.wait(command.id, deviceId, ackTimeoutMs);
    let failure: unknown = null;
    void transport
      .publish(deviceTopic(ctx.config.topicPrefix, deviceId, 'cmd'), Buffer.from(JSON.stringify(command)))
      .catch((error: unknown) => {
        failure = error;
        waiters.cancel(command.id);
      });
    const ack = await answer;
    if (ack) return { kind: 'acked', ack };
    if (failure instanceof NotConnectedError) return { kind: 'offline' };
    if (failure)
      ctx.log.error({ deviceId, commandId: command.id, err: failure }, 'publishing a command failed');
    return { kind: 'timeout' };
  }

  /**
   * A device without a session is offline, unless it is a sandbox barrier, which never has one: the cloud runs
   * its controller, which answers as its outcome says.
   */
  async #sendToSandbox(command: Command): Promise<DispatchResult> {
    const { ctx, waiters, ackTimeoutMs, sandbox } = this.#options;
    const barrier = await sandbox.barrier(command.device_id);
    if (!barrier || barrier.outcome === 'offline') return { kind: 'offline' };
    const answer = waiters.wait(command.id, command.device_id, ackTimeoutMs);
    sandbox.answer(command, barrier).catch((error: unknown) => {
      ctx.log.error(
        { deviceId: command.device_id, commandId: command.id, err: error },
        'the sandbox controller failed',
      );
      waiters.cancel(command.id);
    });
    const ack = await answer;
    return ack ? { kind: 'acked', ack } : { kind: 'timeout' };
  }

  addDevice(deviceId: string, password: string): Promise<void> {
    return this.#options.transport.addDevice(deviceId, password);
  }

  removeDevice(deviceId: string): Promise<void> {
    return this.#options.transport.removeDevice(deviceId);
  }

  connectedControllers(): Promise<number> {
    return this.#options.transport.connectedDevices();
  }

  linked(): boolean {
    return !this.#stopped && this.#options.transport.linked();
  }

  /** Stops the transport, answers waiting dispatches with a timeout, and lets received messages finish. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#options.sandbox.stop();
    try {
      await this.#options.transport.stop();
    } finally {
      this.#options.waiters.cancelAll();
      await this.#options.messages.idle();
    }
  }
}
