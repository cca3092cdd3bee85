import type { VNode } from 'preact';
import { describedBy, FieldError } from '../../foundation/web/field-errors.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { capitalised, Moment } from '../../foundation/web/readable-time.js';
import { lifetimeText } from '../../rules/access-keys/key-lifetime.js';
import type { KeyOnBarrier } from '../../rules/access-keys/keys-on-barrier.js';
import type { CompanyDisplay } from '../../rules/companies/display.js';
import type { BarrierObject, CustomerBarrier } from '../../rules/devices/customer-barriers.js';

/**
 * The consent dialog (docs/design.md section 10.3), a "check your answers" page: the company again (above it,
 * on the request page), then what it may open and for how long, then one button. A key opens one barrier, so
 * the objects are grouped by barrier and the barrier is the one whose objects are ticked; it works without
 * script, which only hides the date field until "until a date" is chosen. Its problems are summed up at the top
 * of the page (request-page.tsx), and each is said again beside its field.
 */
export interface ConsentChoices {
  barriers: { barrier: CustomerBarrier; objects: BarrierObject[] }[];
  /** The objects ticked (number ids). */
  objects: number[];
  lifetime: 'withdrawn' | 'date';
  /** The last day, `YYYY-MM-DD`, as typed. */
  until: string;
  /** The earliest day the date field offers, `YYYY-MM-DD`. */
  today: string;
  errors?: FieldErrors;
}

export function ConsentForm(props: {
  page: PageContext;
  code: string;
  company: CompanyDisplay;
  choices: ConsentChoices;
}): VNode {
  const { choices, company, code } = props;
  const { errors } = choices;
  if (choices.barriers.length === 0) {
    return (
      <section class="card" aria-labelledby="consent-title">
        <h2 id="consent-title">Add your barrier first</h2>
        <p>
          You have no barrier in Gatelink yet. Add it with the pairing code of its controller, then you come
          back here to choose what {company.name} may open.
        </p>
        <p class="actions">
          <a class="button" href={`/barriers?next=/c/${code}`}>
            Add a barrier
          </a>
          <a href="/barriers">Decline</a>
        </p>
      </section>
    );
  }
  const several = choices.barriers.length > 1;
  return (
    <section class="card" aria-labelledby="consent-title">
      <h2 id="consent-title">Give {company.name} access</h2>
      <form method="post" action={`/c/${code}/grant`} novalidate>
        <CsrfField page={props.page} />
        <fieldset id="objects" aria-describedby={describedBy('objects', errors)}>
          <legend>What may {company.name} open?</legend>
          <p class="hint" id="objects-hint">
            {several
              ? 'Tick what they may open. Access covers one barrier: tick objects of one barrier only.'
              : 'Tick what they may open.'}
          </p>
          <FieldError errors={errors} field="objects" />
          {choices.barriers.map(({ barrier, objects }) => (
            <div class="barrier-choice" key={barrier.id}>
              <p class="barrier-name">
                {barrier.name}{' '}
                <span class={`badge ${barrier.online ? 'ok' : 'bad'}`}>
                  {barrier.online ? 'Online' : 'Offline'}
                </span>
              </p>
              {objects.length === 0 ? (
                <p class="muted">Its controller reports nothing to open yet.</p>
              ) : (
                objects.map((object) => (
                  <label class="choice" key={object.numberId}>
                    <input
                      type="checkbox"
                      name="object"
                      value={String(object.numberId)}
                      checked={choices.objects.includes(object.numberId)}
                    />
                    {object.label}
                  </label>
                ))
              )}
            </div>
          ))}
        </fieldset>
        <fieldset id="lifetime" aria-describedby={describedBy('lifetime', errors, false)}>
          <legend>For how long?</legend>
          <FieldError errors={errors} field="lifetime" />
          <label class="choice">
            <input
              type="radio"
              name="lifetime"
              value="withdrawn"
              checked={choices.lifetime === 'withdrawn'}
            />
            Until I withdraw it
          </label>
          <label class="choice">
            <input
              type="radio"
              name="lifetime"
              value="date"
              checked={choices.lifetime === 'date'}
              data-reveals="until-field"
            />
            Until a date
          </label>
          <div id="until-field" class="reveal">
            <label for="until">Last day of access</label>
            <p class="hint" id="until-hint">
              Access ends at the end of that day, UTC. You can still withdraw it earlier.
            </p>
            <FieldError errors={errors} field="until" />
            <input
              type="date"
              id="until"
              name="until"
              min={choices.today}
              value={choices.until}
              aria-describedby={describedBy('until', errors)}
            />
          </div>
        </fieldset>
        <p class="actions">
          <button type="submit">Grant access</button>
          <a href="/barriers">Decline</a>
        </p>
        <p class="hint">
          Declining shares nothing: {company.name} sees only that the request is still open, until it lapses.
        </p>
      </form>
    </section>
  );
}

/** The confirmation: company, barrier, objects and lifetime, and where to see or withdraw it later. */
export function GrantedAccess(props: {
  company: CompanyDisplay;
  granted: KeyOnBarrier & { barrier: { id: string; name: string } | null };
  justGranted: boolean;
}): VNode {
  const { granted, company } = props;
  return (
    <section class="card" aria-labelledby="granted-title">
      {props.justGranted ? (
        <div class="notice ok" role="status">
          Access granted. {company.name} can now open what you chose.
        </div>
      ) : null}
      <h2 id="granted-title">The access you gave</h2>
      <dl class="facts">
        <dt>Company</dt>
        <dd>{company.name}</dd>
        <dt>Barrier</dt>
        <dd>{granted.barrier ? granted.barrier.name : 'A barrier that is no longer yours'}</dd>
        <dt>May open</dt>
        <dd>{granted.objects.map((object) => object.label).join(', ')}</dd>
        <dt>For how long</dt>
        <dd>
          {granted.revokedAt ? (
            <>
              Withdrawn on <Moment date={granted.revokedAt} />
            </>
          ) : granted.expired ? (
            <>Ended ({lifetimeText(granted.expiresAt)})</>
          ) : (
            capitalised(lifetimeText(granted.expiresAt))
          )}
        </dd>
        <dt>Granted on</dt>
        <dd>
          <Moment date={granted.issuedAt} />
        </dd>
      </dl>
      {granted.barrier ? (
        <p>
          <a href={`/barriers/${granted.barrier.id}`}>
            See {granted.barrier.name} and the companies with access
          </a>
        </p>
      ) : null}
    </section>
  );
}
