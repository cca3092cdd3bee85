import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { recordedAddress } from '../foundation/data-folder.js';
import { OPERATOR_TOKEN_FILE } from '../rules/operators/operator-token-file.js';
import { UsageError } from './operator-client.js';

/**
 * Which cloud `gatelink-admin` talks to, and with which token (cloud/README.md, "Operator API"; docs/design.md
 * section 8). The address: `--url`, else `GATELINK_URL`, else the address the cloud running on the data folder
 * recorded there, else the cloud's own `BASE_URL` or `PORT`. The token: `--token`, else `OPERATOR_TOKEN`, else
 * the data folder's `operator-token` file, which is sent only to an address the user named or to the cloud that
 * recorded that folder: never to whatever answers on a port.
 */
export interface Target {
  url: string;
  token: string;
}

export interface LookupInput {
  url?: string | undefined;
  token?: string | undefined;
  env: NodeJS.ProcessEnv;
  /** How the user ran the program, for hints: `npm run admin --` or `gatelink-admin`. */
  program: string;
}

export function findCloud(input: LookupInput): Target {
  const { env, program } = input;
  const folder = resolve(env.GATELINK_DATA_DIR ?? './.data');
  const named = input.url ?? env.GATELINK_URL;
  const recorded = named ? null : recordedAddress(folder);
  const url = named ?? (recorded?.running ? recorded.url : undefined) ?? ownAddress(env);
  if (!url) {
    // Not a typing mistake: one line saying what to do, exit status 1, no pointer to the usage.
    throw new Error(
      recorded
        ? `the cloud that used ${folder} (at ${recorded.url}) is not running: start it (npm start), or name another with --url or GATELINK_URL`
        : `no cloud found: none runs on ${folder}; start one (npm start), or name it with --url or GATELINK_URL`,
    );
  }
  const token = input.token ?? env.OPERATOR_TOKEN;
  if (token) return { url, token };
  const trusted = named !== undefined || recorded?.running === true;
  return { url, token: folderToken(folder, trusted, url, program) };
}

/** The address a cloud started with this environment listens on, when the environment says. */
function ownAddress(env: NodeJS.ProcessEnv): string | undefined {
  if (env.BASE_URL) return env.BASE_URL;
  if (env.PORT) return `http://127.0.0.1:${env.PORT}`;
  return undefined;
}

function folderToken(folder: string, trusted: boolean, url: string, program: string): string {
  const file = resolve(folder, OPERATOR_TOKEN_FILE);
  if (!existsSync(file)) {
    throw new UsageError(
      `no operator token: pass --token, set OPERATOR_TOKEN, or run ${program} where ${file} exists`,
    );
  }
  if (!trusted) {
    throw new UsageError(
      `${file} belongs to the cloud on ${folder}, which is not running, so it is not sent to ${url}: ` +
        'pass --token or set OPERATOR_TOKEN for that cloud, or start the one on that folder',
    );
  }
  return readFileSync(file, 'utf8').trim();
}

/** How the user ran the command line, for the hints it prints. */
export function programName(env: NodeJS.ProcessEnv): string {
  return env.npm_lifecycle_event === 'admin' ? 'npm run admin --' : 'gatelink-admin';
}
