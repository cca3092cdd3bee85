import type { VNode } from 'preact';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { KeyOnBarrier } from '../../rules/access-keys/keys-on-barrier.js';
import type { CustomerBarrier } from '../../rules/devices/customer-barriers.js';
import { DefaultSubmit, LifetimeField, ShapeFields, WiderConfirmation } from './shape-fields.js';
import type { ShapeChoices } from './shape-form.js';

/**
 * `/barriers/<id>/keys/<key_ref>/shape` (docs/design.md section 10.4): the customer changes when a company may
 * open, from when, how many times and until when, with the questions of the consent form, starting from the
 * key as it is. Giving more than the company asked for needs the same "yes" as on the consent form.
 */
export interface KeyShapeForm {
  shape: ShapeChoices;
  /** `keep`: the end it has; offered when it has one. */
  lifetime: 'keep' | 'withdrawn' | 'date';
  until: string;
  today: string;
  wider?: string[];
  errors?: FieldErrors;
}

export function KeyShapePage(props: {
  page: PageContext;
  barrier: CustomerBarrier;
  access: KeyOnBarrier;
  /** What the company asked for, in words; empty when it asked for nothing. */
  proposal: string[];
  form: KeyShapeForm;
}): VNode {
  const { barrier, access, form } = props;
  const company = access.company.name;
  const action = `/barriers/${barrier.id}/keys/${access.keyRef}/shape`;
  return (
    <Layout title={`When ${company} may open ${barrier.name}`} page={props.page}>
      <p class="small">
        <a href={`/barriers/${barrier.id}`}>Back to {barrier.name}</a>
      </p>
      <ErrorSummary errors={form.errors} />
      <h1>
        When {company} may open {barrier.name}
      </h1>
      <p>May open: {access.objects.map((object) => object.label).join(', ')}</p>
      {props.proposal.length > 0 ? (
        <div class="proposal">
          <p>{company} asked for:</p>
          <ul>
            {props.proposal.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <form method="post" action={action} novalidate>
        <CsrfField page={props.page} />
        <DefaultSubmit label="Save" />
        <ShapeFields choices={form.shape} zone={barrier.timeZone} errors={form.errors} company={company} />
        <EndField access={access} form={form} />
        <WiderConfirmation company={company} wider={form.wider} errors={form.errors} />
        <p class="actions sticky">
          <button type="submit">Save</button>
          <a href={`/barriers/${barrier.id}`}>Cancel</a>
        </p>
      </form>
    </Layout>
  );
}

function EndField(props: { access: KeyOnBarrier; form: KeyShapeForm }): VNode {
  const { access, form } = props;
  return (
    <LifetimeField
      lifetime={form.lifetime}
      until={form.until}
      today={form.today}
      zone={access.timeZone}
      errors={form.errors}
      first={
        access.expiresAt ? (
          <label class="choice">
            <input type="radio" name="lifetime" value="keep" checked={form.lifetime === 'keep'} />
            <span>
              Keep its end, <Moment date={access.expiresAt} />
            </span>
          </label>
        ) : null
      }
    />
  );
}
