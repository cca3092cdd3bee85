import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCloud } from '../../cloud/cloud.js';
import { approveCompany, createCompany } from '../../cloud/companies/companies.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { signRequest } from '../../shared/crypto/request-signing.js';
import { localCloudConfig } from '../support/cloud.js';
import { createTestDatabase } from '../support/database.js';
import { startBaseline } from './baseline.js';
import { Client, combined, type Figures, formatFigures, measure, ROUNDS } from './measure.js';

/**
 * Signed `status` calls (issue target: p50 at most 3x a bare Fastify route doing one insert), on one database:
 * `serverUrl` undefined means PGlite, otherwise a PostgreSQL server on which a fresh database is made.
 */
export async function benchSignedStatus(label: string, serverUrl: string | undefined): Promise<void> {
  const database = await createTestDatabase(serverUrl);
  const dataDir = mkdtempSync(join(tmpdir(), 'gatelink-bench-'));
  const companyKey = SigningKey.generate();
  const domain = 'bench.example';
  const cloud = await startCloud({
    config: localCloudConfig(dataDir),
    database,
    jobs: false,
    // The bench company's key file, as its domain would serve it.
    fetchKeyFile: async () => ({ ok: true, key: companyKey.publicKey }),
  });
  const baseline = await startBaseline(database.db);
  const api = new Client(cloud.baseUrl);
  const bare = new Client(baseline.url);
  try {
    const company = await createCompany(cloud.ctx, { name: 'Bench', domain });
    await approveCompany(cloud.ctx, company.id);
    const created = await fetch(
      `${cloud.baseUrl.replace('localhost', '127.0.0.1')}/api/company.php?a=request`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...signRequest(companyKey, { domain, body: '{"ref":"B-1"}' }),
        },
        body: '{"ref":"B-1"}',
      },
    );
    const { code } = (await created.json()) as { code: string };
    const statusBody = JSON.stringify({ code });
    // Each call signed once, with its own nonce, as a company's client would sign it.
    const presigned = (count: number) => {
      const calls = Array.from({ length: count }, () => ({
        path: '/api/company.php?a=status',
        headers: { ...signRequest(companyKey, { domain, body: statusBody }) },
        body: statusBody,
      }));
      return () => calls.pop()!;
    };
    const insert = () => ({ path: '/baseline', headers: {}, body: statusBody });

    console.log(`\n## signed status on ${label}`);
    for (const connections of [1, 8]) {
      const count = (connections === 1 ? 2000 : 400) / ROUNDS;
      const runs: Record<'base' | 'ours', Figures[]> = { base: [], ours: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const warmup = round === 0 ? 50 : 5;
        runs.base.push(await measure(bare, insert, { count, connections, warmup }));
        const calls = presigned(count * connections + warmup);
        runs.ours.push(await measure(api, calls, { count, connections, warmup }));
      }
      const [base, ours] = [combined(runs.base), combined(runs.ours)];
      console.log(`connections: ${connections}`);
      console.log(formatFigures('baseline: Fastify + 1 insert', base));
      console.log(formatFigures('signed a=status', ours));
      console.log(
        `ratio p50 ${(ours.p50 / base.p50).toFixed(2)}x (target <= 3x)  p99 ${(ours.p99 / base.p99).toFixed(2)}x  throughput ${(ours.perSecond / base.perSecond).toFixed(2)}x`,
      );
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
