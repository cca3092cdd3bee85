import type { VNode } from 'preact';
import { Layout, type PageContext } from '../../foundation/web/page.js';

/**
 * `/receipts` (docs/design.md section 5.3): what the journal's receipts are, how to check them with the
 * verifier (the program of docs/receipts.md, served as it is), and what a check proves.
 */
export function ReceiptsHelpPage(props: { page: PageContext; verifier: string }): VNode {
  return (
    <Layout title="Checking your journal's receipts" page={props.page}>
      <h1>Checking your journal's receipts</h1>
      <p>
        Every final entry of a barrier's journal is sealed into a chain: each entry carries the hash of the
        one before it, and each opening carries the controller's own signed acknowledgement and the position
        reports of its gate. Download the receipts from a barrier's journal, then run this program with Python
        3 and the <code>cryptography</code> package:{' '}
        <code>python3 verify_receipts.py receipts.jsonl [earlier.jsonl]</code>.
      </p>
      <p>
        <a class="button secondary" href="/receipts/verify_receipts.py" download>
          Download verify_receipts.py
        </a>
      </p>
      <pre class="secret">{props.verifier}</pre>
      <h2>What it proves</h2>
      <ul>
        <li>
          An acknowledgement or a position report cannot be forged without the controller's key, which never
          leaves the controller.
        </li>
        <li>An entry changed, removed or moved after it was sealed breaks the chain at that entry.</li>
        <li>
          Hashes need no secret, so we could rebuild a whole chain. Keep your exports: the verifier, given an
          earlier one, checks that the new one extends it, which a rebuilt chain does not.
        </li>
        <li>
          Entries still in flight or whose gate is still watched are not sealed yet; the header counts them.
        </li>
      </ul>
    </Layout>
  );
}
