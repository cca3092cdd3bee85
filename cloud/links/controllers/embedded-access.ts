import type { AedesOptions, AuthErrorCode, AuthenticateError, Client, PublishPacket } from 'aedes';
import { isDeviceId } from '../../../shared/protocol/topics.js';
import type { CloudContext } from '../../foundation/context.js';
import { databaseOutage } from '../../foundation/db/database-outage.js';
import { devicePasswordMatches } from '../../rules/devices/credentials.js';
import { StoredPasswords } from '../../rules/devices/stored-passwords.js';
import { deviceMayPublish, deviceMaySubscribe } from './device-access.js';
import { PublishOrder } from './embedded-order.js';

/** CONNACK return codes of MQTT 3.1.1 (section 3.2.2.3); aedes declares them as a const enum. */
const IDENTIFIER_REJECTED = 2 as AuthErrorCode;
const SERVER_UNAVAILABLE = 3 as AuthErrorCode;
const BAD_USERNAME_OR_PASSWORD = 4 as AuthErrorCode;

/** Why a login was refused, as its log line says. */
type LoginRefusal =
  | 'credentials_missing'
  | 'client_id_mismatch'
  | 'bad_credentials'
  | 'credentials_unchecked';

type AccessHooks = Required<Pick<AedesOptions, 'authenticate' | 'authorizePublish' | 'authorizeSubscribe'>>;

/** Takes a publish the rules allowed; aedes answers it (PUBACK) once this resolves, and refuses it if it rejects. */
export type AcceptPublish = (packet: PublishPacket) => Promise<void>;

/**
 * The embedded broker's access rules. Only devices connect to it (the cloud talks to aedes in-process), so
 * every client is a device: user name = device id = client id, password checked against the stored hash.
 * aedes authenticates before it ends an older session with the same client id [MQTT-3.1.4-2], so a
 * connection with wrong credentials cannot take over a device's session.
 *
 * A publish the rules allow is handed to `accept` from here, the last step before aedes answers it, so that
 * the answer waits until the cloud has handled the message: an ack stays in the controller's outbox until the
 * journal holds it. aedes handles all the packets of one socket read at once, so each publish of a connection
 * waits for the one before it (./embedded-order.ts): a device's messages are taken in the order it sent them,
 * and after a refused one, the rest come again behind it.
 */
export function deviceAccessHooks(ctx: CloudContext, accept: AcceptPublish): AccessHooks {
  const prefix = ctx.config.topicPrefix;
  const order = new PublishOrder(accept);
  // Read with other logins arriving together (docs/design.md section 7.3).
  const passwords = new StoredPasswords(ctx.db);
  return {
    authenticate(client, username, password, done) {
      // Each refused login is logged once, with where it came from (cloud/README.md, "Broker limits").
      const refuse = (returnCode: AuthErrorCode, reason: LoginRefusal, message: string) => {
        ctx.log.warn({ remote: remoteOf(client), deviceId: username, reason }, 'refused a device login');
        done(Object.assign(new Error(message), { returnCode }) satisfies AuthenticateError, false);
      };
      if (!username || !isDeviceId(username) || !password) {
        return refuse(
          BAD_USERNAME_OR_PASSWORD,
          'credentials_missing',
          'a device id and password are required',
        );
      }
      // [MQTT-3.1.3-9] the server may refuse a client id; ours must be the device id itself.
      if (client.id !== username) {
        return refuse(IDENTIFIER_REJECTED, 'client_id_mismatch', 'the client id must be the device id');
      }
      passwords.hashOf(username).then(
        (hash) => {
          if (devicePasswordMatches(password, hash)) return done(null, true);
          refuse(BAD_USERNAME_OR_PASSWORD, 'bad_credentials', 'bad device id or password');
        },
        (error: unknown) => {
          // Every controller retries its login: an outage is logged once, not once per attempt.
          if (!databaseOutage(ctx).failed(error, 'device login')) {
            ctx.log.error({ err: error }, 'could not check device credentials');
          }
          refuse(SERVER_UNAVAILABLE, 'credentials_unchecked', 'credentials cannot be checked now');
        },
      );
    },

    authorizeSubscribe(client, subscription, done) {
      if (deviceMaySubscribe(prefix, client.id, subscription.topic)) {
        return done(null, { ...subscription, qos: Math.min(subscription.qos, 1) as 0 | 1 });
      }
      ctx.log.warn({ deviceId: client.id, topic: subscription.topic }, 'refused a device subscription');
      // [MQTT-3.9.3] a null subscription is answered with the failure code 0x80.
      done(null, null);
    },

    authorizePublish(client, packet, done) {
      const deviceId = publisherOf(client, packet);
      if (!deviceId || !deviceMayPublish(prefix, deviceId, packet.topic, packet.retain)) {
        ctx.log.warn({ deviceId, topic: packet.topic, retain: packet.retain }, 'refused a device publish');
        // aedes closes the connection of a client whose publish is refused.
        return done(new Error('not authorized to publish there'));
      }
      // Refused too when the cloud could not take it: the device reconnects and sends it again.
      order
        .take(client, packet)
        .then((taken) => done(taken ? null : new Error('the cloud could not take this message now')));
    },
  };
}

/**
 * Who publishes: the client, or for a will that aedes publishes after its client is gone (client null), the
 * client id stored with the will, which was authenticated when the will was given. Anything else is nobody.
 */
function publisherOf(client: Client | null, packet: PublishPacket): string | null {
  if (client) return client.id;
  const stored = 'clientId' in packet ? packet.clientId : undefined;
  return typeof stored === 'string' && isDeviceId(stored) ? stored : null;
}

/** The address a client connected from: its socket's, which the broker's guarded stream passes on. */
function remoteOf(client: Client): string | undefined {
  return 'remoteAddress' in client.conn ? client.conn.remoteAddress : undefined;
}
