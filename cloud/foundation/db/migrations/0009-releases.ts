import { type Kysely, sql } from 'kysely';

/**
 * Updates over the air, the cloud's side (docs/design.md section 12.4.2):
 * - `releases`: a bundle the operator uploaded, with the manifest the release key signed; one per (arch, version);
 * - `release_chunks`: the bundle's bytes in 1 MiB pieces, so that every node of a cluster serves them and a
 *   backup of the database holds them, and neither an upload nor a download holds a whole bundle in memory;
 * - `rollouts`: which controllers are to take a release, and whether it still runs;
 * - `device_updates`: each targeted controller's progress in a rollout, as it reports it;
 * - `devices.arch`: the processor architecture a controller reports in its state.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of SCHEMA.split(/;\s*\n/).filter((text) => text.trim())) {
    await sql.raw(statement).execute(db);
  }
}

const SCHEMA = `
    alter table devices add column arch text;

    create table releases (
      id integer generated always as identity primary key,
      version text not null,
      arch text not null,
      node_abi text not null,
      sha256 text not null,
      size bigint not null,
      manifest jsonb not null,
      created_at timestamptz not null default now(),
      unique (arch, version)
    );

    create table release_chunks (
      release_id integer not null references releases(id) on delete cascade,
      seq integer not null,
      data bytea not null,
      primary key (release_id, seq)
    );

    create table rollouts (
      id integer generated always as identity primary key,
      release_id integer not null references releases(id),
      target_kind text not null check (target_kind in ('all', 'percent', 'devices')),
      percent integer check (percent between 1 and 100),
      allow_downgrade boolean not null default false,
      max_rollback_share double precision not null,
      state text not null check (state in ('running', 'paused', 'halted', 'finished')),
      halted_reason text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );

    create table device_updates (
      rollout_id integer not null references rollouts(id) on delete cascade,
      device_id text not null references devices(id) on delete cascade,
      state text not null check (state in
        ('pending', 'sent', 'downloading', 'switched', 'healthy', 'rolled_back', 'refused', 'failed')),
      reason text,
      detail text,
      sent_at timestamptz,
      updated_at timestamptz not null default now(),
      primary key (rollout_id, device_id)
    );
    create index device_updates_device on device_updates (device_id, rollout_id);
`;
