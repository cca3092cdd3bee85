import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningCloud, startCloud } from '../../cloud/cloud.js';
import { issueSecret } from '../../cloud/rules/call-auth/secret.js';
import { approveCompany, createCompany } from '../../cloud/rules/companies/companies.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { signRequest } from '../../shared/crypto/request-signing.js';
import { localCloudConfig } from '../support/cloud.js';
import { createTestDatabase } from '../support/database.js';
import { startBaseline } from './baseline.js';
import { printBreakdown } from './breakdowns.js';
import { formatDifference } from './cpu-breakdown.js';
import { type CallSpec, Client, combined, type Figures, formatFigures, measure, ROUNDS } from './measure.js';
import { RoundTrips } from './round-trips.js';

const DOMAIN = 'bench.example';

/**
 * Signed `status` calls beside the same call in secret mode and a bare Fastify route doing one insert, on one
 * database: `serverUrl` undefined means PGlite, otherwise a PostgreSQL server on which a fresh database is made.
 * Targets (docs/design.md section 2.1), at 8 connections: signed throughput at least 0.7x secret mode's, and
 * signed p50 at most 1.5x the bare insert's. What separates the two modes is the nonce's durable insert.
 */
export async function benchSignedStatus(label: string, serverUrl: string | undefined): Promise<void> {
  const database = await createTestDatabase(serverUrl);
  const trips = new RoundTrips();
  const dataDir = mkdtempSync(join(tmpdir(), 'gatelink-bench-'));
  const companyKey = SigningKey.generate();
  const cloud = await startCloud({
    config: localCloudConfig(dataDir),
    database: trips.timed(database),
    jobs: false,
    // The bench company's key file, as its domain would serve it.
    fetchKeyFile: async () => ({ ok: true, key: companyKey.publicKey }),
  });
  const baseline = await startBaseline(database.db);
  const api = new Client(cloud.baseUrl);
  const bare = new Client(baseline.url);
  try {
    const signed = await signedStatusCalls(cloud, companyKey);
    const secret = await secretStatusCalls(cloud);
    const insert = (): CallSpec => ({ path: '/baseline', headers: {}, body: '{"code":"bench"}' });

    console.log(`\n## signed status on ${label}`);
    for (const connections of [1, 8]) {
      const count = (connections === 1 ? 2000 : 800) / ROUNDS;
      const runs: Record<'base' | 'secret' | 'signed', Figures[]> = { base: [], secret: [], signed: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const warmup = round === 0 ? 50 : 5;
        runs.base.push(await measure(bare, insert, { count, connections, warmup }));
        runs.secret.push(await measure(api, secret, { count, connections, warmup }));
        runs.signed.push(
          await measure(api, signed(count * connections + warmup), { count, connections, warmup }),
        );
      }
      const [base, bySecret, ours] = [combined(runs.base), combined(runs.secret), combined(runs.signed)];
      console.log(`connections: ${connections}`);
      console.log(formatFigures('baseline: Fastify + 1 insert', base));
      console.log(formatFigures('secret-mode a=status', bySecret));
      console.log(formatFigures('signed a=status', ours));
      console.log(
        `signed vs insert: p50 ${(ours.p50 / base.p50).toFixed(2)}x (target <= 1.5x)  p99 ${(ours.p99 / base.p99).toFixed(2)}x`,
      );
      console.log(
        `signed vs secret: throughput ${(ours.perSecond / bySecret.perSecond).toFixed(2)}x (target >= 0.7x)  p50 ${(ours.p50 / bySecret.p50).toFixed(2)}x`,
      );
      if (connections === 1) continue;
      const warmup = 5;
      const bySecretOnce = await printBreakdown(
        'secret-mode status',
        trips,
        () => measure(api, secret, { count, connections, warmup }),
        warmup,
      );
      const signedOnce = await printBreakdown(
        'signed status',
        trips,
        () => measure(api, signed(count * connections + warmup), { count, connections, warmup }),
        warmup,
      );
      console.log(formatDifference('what signing adds to one call', bySecretOnce, signedOnce));
    }
  } finally {
    await api.close();
    await bare.close();
    await baseline.close();
    await cloud.stop();
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A company that signs with its domain's key, one request, and a maker of `count` calls each signed once. */
async function signedStatusCalls(
  cloud: RunningCloud,
  key: SigningKey,
): Promise<(count: number) => () => CallSpec> {
  const company = await createCompany(cloud.ctx, { name: 'Bench', domain: DOMAIN });
  await approveCompany(cloud.ctx, company.id);
  const body = '{"ref":"B-1"}';
  const { code } = await call<{ code: string }>(cloud, 'request', body, {
    ...signRequest(key, { domain: DOMAIN, body }),
  });
  const statusBody = JSON.stringify({ code });
  // Each call signed once, with its own nonce, as a company's client would sign it.
  return (count) => {
    const calls = Array.from({ length: count }, () => ({
      path: '/api/company.php?a=status',
      headers: { ...signRequest(key, { domain: DOMAIN, body: statusBody }) },
      body: statusBody,
    }));
    return () => calls.pop()!;
  };
}

/** A company without a domain, its secret, one request, and the status call that reads it. */
async function secretStatusCalls(cloud: RunningCloud): Promise<() => CallSpec> {
  const company = await createCompany(cloud.ctx, { name: 'Bench by secret' });
  await approveCompany(cloud.ctx, company.id);
  const { secret } = await issueSecret(cloud.ctx, company.id);
  const credentials = { org_id: company.id, secret };
  const { code } = await call<{ code: string }>(
    cloud,
    'request',
    JSON.stringify({ ...credentials, ref: 'S-1' }),
  );
  const body = JSON.stringify({ ...credentials, code });
  return () => ({ path: '/api/company.php?a=status', headers: {}, body });
}

async function call<T>(
  cloud: RunningCloud,
  action: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<T> {
  const response = await fetch(
    `${cloud.baseUrl.replace('localhost', '127.0.0.1')}/api/company.php?a=${action}`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    },
  );
  if (!response.ok)
    throw new Error(`the bench's ${action} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}
