import type { VNode } from 'preact';
import { ChangeForm } from '../../foundation/web/change-form.js';
import type { PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';

/**
 * One secret in a list of those still working (docs/design.md sections 11.2 and 11.4): the API secrets and the
 * callback's signing secrets alike. By its last four characters, in use or retiring with the time it stops and
 * the time left, and for a retiring one the form that ends it now, which asks first with the script.
 */
export interface ListedSecret {
  id: number;
  hint: string;
  createdAt: Date;
  retiresAt: Date | null;
}

/** What differs between the two lists: the prefix, the words, and where "Expire it now" posts. */
export interface SecretLineWords {
  prefix: string;
  made: string;
  until: string;
  /** Times to the second, where the list is about deliveries a receiver checks to the second. */
  seconds: boolean;
  expireAction: (secret: ListedSecret) => string;
  confirm: (secret: ListedSecret) => string;
  hint: string;
}

export function SecretLine(props: {
  secret: ListedSecret;
  now: Date;
  page: PageContext;
  words: SecretLineWords;
}): VNode {
  const { secret, words } = props;
  return (
    <li>
      <code>
        {words.prefix}…{secret.hint}
      </code>{' '}
      {secret.retiresAt === null ? (
        <span class="badge ok">In use</span>
      ) : (
        <span class="badge wait">Retiring</span>
      )}
      <div class="muted small">
        {words.made} <Moment date={secret.createdAt} seconds={words.seconds} />
        {secret.retiresAt ? (
          <>
            ; {words.until} <Moment date={secret.retiresAt} seconds={words.seconds} /> (
            {timeLeft(secret.retiresAt, props.now)} left)
          </>
        ) : null}
      </div>
      {secret.retiresAt ? (
        <ChangeForm
          page={props.page}
          action={words.expireAction(secret)}
          data-confirm={words.confirm(secret)}
        >
          <button type="submit" class="secondary">
            Expire it now
          </button>
          <span class="hint"> {words.hint}</span>
        </ChangeForm>
      ) : null}
    </li>
  );
}

/** "5 h 12 min": the time until `end`, to the minute, rounded down. */
export function timeLeft(end: Date, now: Date): string {
  const minutes = Math.max(0, Math.floor((end.getTime() - now.getTime()) / 60_000));
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
