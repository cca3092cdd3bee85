import type { VNode } from 'preact';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import type { RolloutView } from '../../rules/rollouts/rollouts.js';
import type { ConsoleOperator } from './console-access.js';
import { ConsoleFrame } from './console-frame.js';

/**
 * `/console/rollouts` (docs/design.md section 12.4.2): every rollout with how many of its controllers are in
 * each state, and a form to pause a running one or resume a paused one. Rollouts start from gatelink-admin.
 */
export function RolloutsPage(props: {
  page: PageContext;
  operator: ConsoleOperator;
  rollouts: RolloutView[];
  notice?: string | undefined;
}): VNode {
  return (
    <ConsoleFrame page={props.page} operator={props.operator} section="rollouts" title="Rollouts">
      <h2 class="section-title">Rollouts</h2>
      {props.notice ? (
        <div class="notice ok" role="status">
          {props.notice}
        </div>
      ) : null}
      <section class="card" aria-label="Rollouts">
        {props.rollouts.length === 0 ? (
          <p class="muted">No rollout yet: start one with gatelink-admin rollout start.</p>
        ) : (
          <ul class="list">
            {props.rollouts.map((rollout) => (
              <RolloutRow key={rollout.id} page={props.page} rollout={rollout} />
            ))}
          </ul>
        )}
      </section>
    </ConsoleFrame>
  );
}

function RolloutRow(props: { page: PageContext; rollout: RolloutView }): VNode {
  const { rollout } = props;
  const counts = Object.entries(rollout.counts)
    .map(([state, count]) => `${state.replace('_', ' ')} ${count}`)
    .join(' · ');
  const move = rollout.state === 'running' ? 'pause' : rollout.state === 'paused' ? 'resume' : null;
  return (
    <li class="row">
      <div class="grow">
        <div>
          Rollout {rollout.id}: {rollout.version} ({rollout.arch}), {rollout.state}
        </div>
        <div class="muted small">
          {rollout.targeted} targeted{counts ? ` · ${counts}` : ''}
        </div>
        {rollout.halted_reason ? <div class="small">Halted: {rollout.halted_reason}</div> : null}
      </div>
      {move ? (
        <form method="post" action={`/console/rollouts/${rollout.id}/${move}`}>
          <CsrfField page={props.page} />
          <button type="submit" aria-label={`${move === 'pause' ? 'Pause' : 'Resume'} rollout ${rollout.id}`}>
            {move === 'pause' ? 'Pause' : 'Resume'}
          </button>
        </form>
      ) : null}
    </li>
  );
}
