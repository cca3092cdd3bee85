import { existsSync } from 'node:fs';
import { loadCloudConfig } from '../foundation/config.js';
import { makePrivate } from '../foundation/data-folder.js';
import { makeOperatorToken, operatorTokenFile } from '../rules/operators/operator-token-file.js';
import { makeServiceKey, readServiceKey } from '../rules/service-key/service-key-file.js';
import { makeVapidKey, readVapidKey } from '../rules/vapid-key/vapid-key-file.js';
import type { Row } from './operator-client.js';

/**
 * `gatelink-admin keys init` (cloud/README.md, "Running in production"): on the server, before the first start,
 * makes what production never makes at start: the service key, the VAPID key that signs Web Push requests
 * (docs/design.md section 10.6), and the operator token file unless
 * OPERATOR_TOKEN gives the token. Read from the same environment as the cloud, made by the same functions, and
 * never over an existing file: what exists is kept and shown, so that a second server's key can be compared
 * with the first's by its fingerprint.
 */
export interface KeysInitResult {
  answer: Row;
  text(): string;
}

export function keysInit(env: NodeJS.ProcessEnv): KeysInitResult {
  const config = loadCloudConfig(env);
  makePrivate(config.dataDir);
  const keyMade = !existsSync(config.serviceKeyFile);
  const key = keyMade ? makeServiceKey(config.serviceKeyFile) : readServiceKey(config.serviceKeyFile);
  const vapidMade = !existsSync(config.vapidKeyFile);
  const vapid = vapidMade ? makeVapidKey(config.vapidKeyFile) : readVapidKey(config.vapidKeyFile);
  const tokenFile = config.operatorToken ? undefined : operatorTokenFile(config.dataDir);
  const tokenMade = tokenFile !== undefined && !existsSync(tokenFile);
  if (tokenMade) makeOperatorToken(tokenFile);
  const answer: Row = {
    service_key: {
      file: config.serviceKeyFile,
      made: keyMade,
      public_key: key.publicKey.base64,
      fingerprint: key.publicKey.fingerprint,
    },
    vapid_key: { file: config.vapidKeyFile, made: vapidMade, public_key: vapid.publicKey },
    operator_token: { file: tokenFile ?? null, made: tokenMade },
  };
  const state = (made: boolean) => (made ? 'made' : 'exists, kept as it is');
  const text = () =>
    [
      ...(keyMade || vapidMade || tokenMade
        ? []
        : ['Nothing made: the service key, the VAPID key and the operator token exist already.']),
      `Service key     ${config.serviceKeyFile} (${state(keyMade)})`,
      `  public key    ${key.publicKey.base64}`,
      `  fingerprint   ${key.publicKey.fingerprint}`,
      `VAPID key       ${config.vapidKeyFile} (${state(vapidMade)})`,
      `  public key    ${vapid.publicKey}`,
      tokenFile
        ? `Operator token  ${tokenFile} (${state(tokenMade)})`
        : 'Operator token  from OPERATOR_TOKEN (no file made)',
      'Every instance on the same database needs a copy of this service key file: compare the fingerprint there.',
      'It needs a copy of the VAPID key file too: a new one ends every notification subscription.',
    ].join('\n');
  return { answer, text };
}
