/**
 * Every attack the project defends against, with where the rule comes from. A test that tries one carries its
 * id in its name, `[attack:<id>]`; `npm run attacks` (run.ts) runs the suites and prints each attack with its
 * tests and their results, and catalogue.test.ts keeps the list and the tags in step.
 */
export interface Attack {
  /** `<area>.<what>`, used in test names as `[attack:<id>]`. */
  id: string;
  /** The attack, as a hostile client would try it. */
  attack: string;
  /** Where the defence is required. */
  source: string;
}

export const ATTACKS: readonly Attack[] = [
  {
    id: 'http.oversized-body',
    attack: 'a body over 16 KiB, announced or streamed',
    source: 'docs/design.md section 1',
  },
  {
    id: 'http.odd-input',
    attack: 'odd bodies, values and headers that could reach an unexpected failure (a 500 with internals)',
    source: 'docs/design.md section 1',
  },
  {
    id: 'http.request-id-injection',
    attack: 'a client-chosen X-Request-Id, to forge or confuse the log',
    source: 'docs/design.md section 1',
  },
  {
    id: 'http.parser-error',
    attack:
      "a request Node's HTTP parser refuses is answered outside the error contract, without X-Request-Id",
    source: 'issue 11, finding 4; docs/design.md section 1',
  },
  { id: 'http.wrong-method', attack: 'GET or PUT on /api/company.php', source: 'issue 11, finding 4' },
  {
    id: 'http.slow-client',
    attack: 'slow HTTP clients send their headers one byte a second while real openings go on',
    source: 'issue 11, resource abuse',
  },
  {
    id: 'auth.nonce-replay',
    attack:
      'a signed call replayed with its nonce, on the same or another cloud instance, or after the nonce was purged',
    source: 'docs/design.md section 2',
  },
  {
    id: 'auth.nonce-burn',
    attack:
      "calls with a forged signature carrying nonces a company is about to use, sent in a burst so that they share the nonce insert with genuine calls, to make the company's own calls refused as replays",
    source: 'docs/design.md section 2.1',
  },
  {
    id: 'auth.tampered-body',
    attack: 'a signed call whose body was changed on the way',
    source: 'docs/design.md section 2',
  },
  {
    id: 'auth.stale-timestamp',
    attack: 'a signed call replayed more than 300 s after, or dated ahead',
    source: 'docs/design.md section 2',
  },
  {
    id: 'auth.wrong-key',
    attack: "a call signed with another key, or over another domain's base string",
    source: 'docs/design.md section 2',
  },
  {
    id: 'auth.malleable-signature',
    attack: 'a valid signature made non-canonical (S + L) to pass as another',
    source: 'docs/design.md section 2',
  },
  {
    id: 'auth.weak-key',
    attack: 'a key file holding a small-order, non-canonical or identity key that verifies forged signatures',
    source: 'docs/design.md section 2',
  },
  {
    id: 'auth.org-mismatch',
    attack: "a signed call whose body names another company's org_id",
    source: 'docs/design.md section 2',
  },
  {
    id: 'auth.secret-guess',
    attack: 'a wrong or guessed secret, or one without org_id',
    source: 'docs/design.md section 2',
  },
  {
    id: 'auth.secret-leak',
    attack: 'reading secrets from the database, or finding a leaked one unrecognised',
    source: 'docs/design.md section 2',
  },
  {
    id: 'auth.secret-after-domain',
    attack: 'a secret used by a company that has a domain',
    source: 'docs/design.md section 2, spec 5.2',
  },
  {
    id: 'auth.unapproved-company',
    attack: "a pending or suspended company calling, or opening through another instance's cache",
    source: 'docs/design.md section 2',
  },
  {
    id: 'sandbox.opens-live-key',
    attack: 'a sandbox call (sandbox secret, or the flag) opens a live key or reads a live request',
    source: 'issue 31, item 1; docs/design.md section 11.9',
  },
  {
    id: 'sandbox.flag-added-on-the-way',
    attack: 'the sandbox flag added to, or taken from, a signed body on its way',
    source: 'docs/design.md section 11.9',
  },
  {
    id: 'auth.domain-changes-hands',
    attack: "a domain's new owner publishes its own key to inherit the old owner's access",
    source: 'docs/design.md section 2',
  },
  {
    id: 'auth.withdrawn-key-file',
    attack: 'calls going on after the key file disappears',
    source: 'docs/design.md section 2',
  },
  {
    id: 'keyfile.private-address',
    attack: 'a domain that resolves, rebinds or connects to a private, loopback or link-local address (SSRF)',
    source: 'docs/design.md section 2',
  },
  {
    id: 'keyfile.redirect',
    attack: 'a key file that redirects to another host or port',
    source: 'docs/design.md section 2',
  },
  {
    id: 'keyfile.oversized-or-slow',
    attack: 'a key file that is huge, never ends, or trickles in',
    source: 'docs/design.md section 2',
  },
  {
    id: 'config.test-switch-in-production',
    attack: 'the test switches for key files and callbacks set in production',
    source: 'docs/design.md section 8',
  },
  {
    id: 'request.code-guessing',
    attack: "guessing request codes, or reading another company's request by its code",
    source: 'docs/design.md section 3',
  },
  {
    id: 'idempotency.body-swap',
    attack: 'a retry with the same Idempotency-Key and another body',
    source: 'docs/design.md section 3',
  },
  {
    id: 'idempotency.double-open',
    attack: 'a retry after a timeout that would open the gate a second time',
    source: 'docs/design.md section 3',
  },
  {
    id: 'open.foreign-key',
    attack: "opening with another company's key, or an object outside the key",
    source: 'docs/design.md section 4',
  },
  {
    id: 'open.after-revocation',
    attack: "opening after the customer withdrew access, or after the key's end",
    source: 'docs/design.md section 4',
  },
  {
    id: 'open.rate-limit',
    attack: 'a burst of openings with one key, concurrent or across instances',
    source: 'docs/design.md section 4',
  },
  {
    id: 'open.flood-starves-others',
    attack:
      "one company sends openings faster than the database commits them, across many keys, so that every other company's couriers wait behind them until their calls time out",
    source: 'docs/design.md section 7.6',
  },
  {
    id: 'open.queued-for-later',
    attack: 'an opening queued while the controller is offline, to open minutes later',
    source: 'docs/design.md section 4',
  },
  {
    id: 'text.invisible-characters',
    attack:
      'an actor or ref with control, direction, line or paragraph separator or invisible format characters',
    source: 'issue 11, finding 5; docs/design.md section 4',
  },
  {
    id: 'journal.pending-after-crash',
    attack: 'the cloud dies mid-open: the entry stays pending and a retry finds the call in flight forever',
    source: 'issue 11, finding 2',
  },
  {
    id: 'mqtt.device-overreach',
    attack: "a device publishing to another device's topics or to commands, or subscribing beyond its own",
    source: 'docs/design.md section 7',
  },
  {
    id: 'mqtt.session-takeover',
    attack: "connecting with another device's identity, a forged client id, or no credentials",
    source: 'docs/design.md section 7',
  },
  {
    id: 'mqtt.forged-ack',
    attack: 'an acknowledgement signed with another key, or replayed',
    source: 'docs/design.md section 7',
  },
  {
    id: 'mqtt.phone-ack-other-device',
    attack:
      "a phone controller (a customer's own, set up without an operator) acknowledging another controller's command as a call placed or answered, naming that controller or itself",
    source: 'docs/design.md sections 7 and 12.6',
  },
  {
    id: 'mqtt.position-other-device',
    attack:
      "a gate position report for another controller's gate: signed with the sender's own key but naming the other controller, or sent on the other controller's topic signed with the sender's key",
    source: 'docs/design.md section 7.5',
  },
  {
    id: 'mqtt.forged-position',
    attack: 'a gate position report whose signature does not verify (altered after signing, or made up)',
    source: 'docs/design.md section 7.5',
  },
  {
    id: 'mqtt.replayed-position',
    attack:
      "a controller's old signed position report sent again, to show a closed gate as open (or the reverse) or to attach an old step to a new opening",
    source: 'docs/design.md section 7.5',
  },
  {
    id: 'mqtt.oversized-connect',
    attack: 'a client that never logs in declares a huge CONNECT and streams its bytes to grow the memory',
    source: 'issue 11, finding 1',
  },
  {
    id: 'mqtt.oversized-packet',
    attack: 'an authenticated device sends a packet far larger than any message it needs',
    source: 'issue 11, finding 1',
  },
  {
    id: 'mqtt.half-open-flood',
    attack: 'one address opens many connections that never finish CONNECT',
    source: 'issue 11, finding 1',
  },
  {
    id: 'mqtt.slow-connect',
    attack: 'a connection that never finishes its CONNECT holds its place forever',
    source: 'issue 11, finding 1',
  },
  {
    id: 'mqtt.bad-login-burst',
    attack: 'a burst of MQTT logins with wrong credentials while real openings go on',
    source: 'issue 11, resource abuse',
  },
  {
    id: 'command.forged',
    attack: 'a command signed with another key, or altered after signing',
    source: 'docs/design.md section 7',
  },
  {
    id: 'command.misdirected',
    attack: 'a command for another device, or for an object it does not have',
    source: 'docs/design.md section 7',
  },
  {
    id: 'command.replayed',
    attack: 'a command repeated, replayed after a restart, or redelivered after a crash mid-pulse',
    source: 'docs/design.md section 7',
  },
  {
    id: 'command.expired',
    attack: 'a command delivered after its expires_at, or issued before the clock could be trusted',
    source: 'docs/design.md section 7',
  },
  {
    id: 'command.concurrent',
    attack: 'a second command for an object whose operation is still running',
    source: 'docs/design.md section 7',
  },
  {
    id: 'operator.token-elsewhere',
    attack:
      "a program on a port gatelink-admin might try (a stale address, the default port) collecting the data folder's operator token",
    source: 'docs/design.md section 8',
  },
  {
    id: 'operator.token-redirect',
    attack: 'an address that redirects gatelink-admin elsewhere, to collect the operator token there',
    source: 'docs/design.md section 8',
  },
  {
    id: 'operator.no-token',
    attack: 'operator calls without the token, or with a wrong one',
    source: 'docs/design.md section 8',
  },
  {
    id: 'ops.metrics-token',
    attack:
      'reading /metrics (the counts of calls, openings and events) without the operator token, or with a wrong one',
    source: 'docs/design.md section 8.1',
  },
  {
    id: 'provisioning.code-reuse',
    attack: 'a provisioning or pairing code used twice, after 24 hours, or guessed',
    source: 'docs/design.md section 9',
  },
  {
    id: 'provisioning.plain-http',
    attack: 'provisioning over plain http to anything but localhost',
    source: 'docs/design.md section 9',
  },
  {
    id: 'provisioning.cloud-impostor',
    attack:
      "provisioning against an https address whose certificate does not verify (another host's, or signed by a CA the installer did not give with --ca-file)",
    source: 'docs/design.md section 9',
  },
  {
    id: 'device.plain-mqtt',
    attack:
      'a controller configured with plain mqtt:// or ws:// to a broker off the board, sending its password and commands in the clear',
    source: 'docs/design.md section 9',
  },
  {
    id: 'device.broker-impostor',
    attack:
      "a broker (or a machine in the middle) whose certificate is not signed by the CA of mqtt.ca_file, taking the controller's login and sending it commands",
    source: 'docs/design.md section 9',
  },
  {
    id: 'device.pairing-code-forged',
    attack:
      "asking for a controller's pairing code with a call signed by another controller's key, or with a genuine signature made for another path",
    source: 'docs/design.md section 9.1',
  },
  {
    id: 'device.retired-controller',
    attack:
      'a removed or replaced controller, still holding its key, calling the cloud or getting a pairing code again',
    source: 'docs/design.md section 9.1',
  },
  {
    id: 'device.update-forged',
    attack:
      "an update command on a controller's cmd topic that the cloud did not sign: from another client, another controller or a broker in the middle",
    source: 'docs/design.md section 12.4.3',
  },
  {
    id: 'device.release-forged',
    attack:
      'a release whose manifest the operator’s release key did not sign, uploaded to the cloud or sent to a controller (by anyone able to send update commands, the cloud included)',
    source: 'docs/design.md sections 12.4.2, 12.4.3',
  },
  {
    id: 'device.release-rollback',
    attack: 'a genuine older release sent to take a controller back to a version with a known flaw',
    source: 'docs/design.md section 12.4.3',
  },
  {
    id: 'device.release-wrong-arch',
    attack: 'a genuine manifest and bundle replayed to a controller of another architecture',
    source: 'docs/design.md section 12.4.3',
  },
  {
    id: 'device.bundle-tampered',
    attack: 'a bundle changed on the way or in the store, under a genuine manifest',
    source: 'docs/design.md sections 12.4.3, 12.4.4',
  },
  {
    id: 'device.phone-code-other-account',
    attack:
      "a customer's phone set-up code, read off their screen or their Termux, typed into another account's pairing form or used to provision a phone of someone else's",
    source: 'docs/design.md section 9.3',
  },
  {
    id: 'device.bundle-elsewhere',
    attack: 'an update command pointing the controller’s download at a server other than its cloud',
    source: 'docs/design.md section 12.4.3',
  },
  {
    id: 'device.bundle-traversal',
    attack:
      'a bundle holding a symbolic link, an absolute path or a path climbing out with .., to write outside the release folder',
    source: 'docs/design.md section 12.4.3',
  },
  {
    id: 'web.release-download-flood',
    attack:
      'many slow public downloads of a release bundle, holding the cloud’s database connections from everyone else',
    source: 'docs/design.md section 12.4.4',
  },
  {
    id: 'data.second-instance',
    attack: 'a second cloud starts on the same embedded-database folder and both write its files',
    source: 'issue 11, finding 3',
  },
  {
    id: 'data.file-modes',
    attack: 'another local user reads the database, operator token or keys in the data folder',
    source: 'issue 11, finding 3',
  },
  {
    id: 'fuzz.company-api',
    attack: 'arbitrary bodies, headers, content types and sizes on the company API',
    source: 'issue 11, campaign; docs/design.md section 1',
  },
  {
    id: 'fuzz.device-messages',
    attack: 'arbitrary payloads on every kind of device message, on both brokers',
    source: 'issue 11, campaign; docs/design.md section 7',
  },
  {
    id: 'fuzz.command-parser',
    attack: "arbitrary bytes as a command to the controller's parser",
    source: 'issue 11, campaign; docs/design.md section 7',
  },
  {
    id: 'chaos.kill-restart',
    attack:
      'the broker restarts and the controller and a cloud instance are killed with SIGKILL while companies open',
    source: 'issue 11, campaign',
  },
  {
    id: 'web.csrf-cross-site-form',
    attack:
      "a form on another site posts a state change (sign-out, grant, withdraw) with the customer's cookies",
    source: 'issue 13; docs/design.md section 10',
  },
  {
    id: 'web.other-customer-urls',
    attack: "a signed-in customer opens or posts to another customer's barrier, key, journal and CSV URLs",
    source: 'issue 13; docs/design.md section 10',
  },
  {
    id: 'web.gate-limits-bounds',
    attack:
      "gate alert limits outside their bounds (0 minutes, 10^11 seconds, text) posted to a barrier's form, to flood alerts or fail the sweep",
    source: 'issue 28; docs/design.md section 10.4',
  },
  {
    id: 'web.code-lookup-hammer',
    attack: 'a client hammers /c/<code> with guessed codes past the per-address limit, across instances',
    source: 'issue 13; docs/design.md section 10',
  },
  {
    id: 'web.link-preview-claim',
    attack:
      "a messenger's link preview fetches /c/<code> (GET, with or without a session) and must not claim it",
    source: 'issue 13; docs/design.md section 10',
  },
  {
    id: 'api.shape-widening',
    attack:
      'a company widens a grant it holds: the same Idempotency-Key with a wider shape, a new request, or a shape in the body of open, to open outside the hours the customer allowed',
    source: 'docs/design.md section 3.1',
  },
  {
    id: 'api.shape-nonsense',
    attack:
      'a company proposes a shape that cannot be granted: a window of zero length, a start after its end, an end in the past, an unknown field that would widen nothing yet be taken as something',
    source: 'docs/design.md section 3.1',
  },
  {
    id: 'web.shape-widening',
    attack:
      'a customer form posted with more than the company asked for, so that a grant wider than the proposal is made without the customer saying so',
    source: 'docs/design.md sections 3.1 and 10.3',
  },
  {
    id: 'web.shape-foreign-key',
    attack:
      "a signed-in customer changes the shape of another customer's key, or of a withdrawn key, through the barrier page's form",
    source: 'docs/design.md section 10.4',
  },
  {
    id: 'web.decline-foreign-request',
    attack:
      "a signed-in customer, or a signed-out browser, posts Decline for a request another account claimed (or one already granted or lapsed), to end a company's request that is not theirs",
    source: 'docs/design.md section 10.3',
  },
  {
    id: 'web.release-foreign-request',
    attack:
      'a signed-in customer, or a signed-out browser, posts Release for a request another account claimed (or one already granted or declined), to take a claim from its holder and claim the request itself',
    source: 'docs/design.md section 10.3',
  },
  {
    id: 'web.handover-outside-household',
    attack:
      'the holder of a claimed request passes it to a stranger or a look-only member, or someone who does not hold it (the one who passed it, a stranger) posts Pass it on, to put a request in hands that may not answer it',
    source: 'docs/design.md section 9.2',
  },
  {
    id: 'web.actor-markup',
    attack: "a company sends an actor holding <script> and markup, to run script in the customer's journal",
    source: 'issue 13; docs/design.md section 10',
  },
  {
    id: 'web.csv-formula',
    attack:
      'an actor or label starting with =, +, - or @ (=HYPERLINK(...)) to run a formula in the exported CSV',
    source: 'issue 13; docs/design.md section 10',
  },
  {
    id: 'web.email-code-replay',
    attack: 'a one-time e-mail code used a second time, or after its 10 minutes',
    source: 'issue 13; docs/design.md section 10',
  },
  {
    id: 'web.email-code-guess',
    attack: 'guessing an e-mail code, or asking for codes for one e-mail or from one address without end',
    source: 'issue 13; docs/design.md section 10',
  },
  {
    id: 'web.next-redirect',
    attack: 'a crafted sign-in link whose next= sends the customer to another site after signing in',
    source: 'docs/design.md section 10',
  },
  {
    id: 'web.next-invisible-characters',
    attack:
      'a next= that hides another site in what a browser drops or reads as a slash: TAB, LF or CR inside //, a backslash, slashes percent-encoded, NBSP or U+2028',
    source: 'docs/design.md section 10.2',
  },
  {
    id: 'web.next-header-injection',
    attack:
      'a next= with characters Node refuses in a header (CR LF, NUL, beyond Latin-1), to split the answer or make the code step a 500 that spends the code for nothing',
    source: 'docs/design.md section 10.2',
  },
  {
    id: 'web.pairing-steal',
    attack: 'pairing a controller that already belongs to another customer, or with a used or expired code',
    source: 'docs/design.md section 9',
  },
  {
    id: 'web.replace-with-foreign-controller',
    attack:
      "replacing one's barrier's controller with another customer's controller (its used pairing code), or another customer's barrier with one's own spare",
    source: 'docs/design.md section 9.1',
  },
  {
    id: 'web.passkey-foreign',
    attack:
      'signing in with a passkey response made for another challenge, origin or customer, or removing the last way in',
    source: 'docs/design.md section 10',
  },
  {
    id: 'web.push-foreign-subscription',
    attack:
      "renaming or removing another customer's notification subscription by its id, or taking over an endpoint another account subscribed",
    source: 'docs/design.md section 10.6',
  },
  {
    id: 'web.notification-choice-foreign',
    attack:
      "posting the notification choice form for a barrier that is not one's own, to change what its household is told",
    source: 'docs/design.md section 10.7',
  },
  {
    id: 'web.answer-forged',
    attack:
      "an Allow for a waiting opening posted without the customer's session, from another customer's account, or by a member who may only look, to open someone's gate",
    source: 'docs/design.md section 10.8',
  },
  {
    id: 'web.call-tap-forged',
    attack:
      "a tap on Call the gate posted from another customer's account, or by a member who may only look, to open someone's gate as opened, or to learn the number that opens it",
    source: 'docs/design.md section 10.9',
  },
  {
    id: 'web.quiet-hours-foreign',
    attack:
      "posting quiet hours or the daily e-mail for a barrier that is not one's own, to silence what its household is told or to have its journal e-mailed",
    source: 'docs/design.md section 10.7',
  },
  {
    id: 'web.unsubscribe-forged',
    attack:
      "a forged, altered or unknown one-click unsubscribe token, to stop another person's e-mails of openings without their link",
    source: 'docs/design.md section 10.7',
  },
  {
    id: 'web.push-private-endpoint',
    attack:
      'a notification subscription whose push service is, or resolves to, a private or loopback address, so that the cloud would post into its own network',
    source: 'docs/design.md section 10.6',
  },
  {
    id: 'web.company-other-company',
    attack:
      "a member of one company opening or posting to another company's pages by changing the id in the address",
    source: 'issue 14; docs/design.md section 11.1',
  },
  {
    id: 'web.company-removed-member',
    attack: 'a removed member going on with the session they had before removal',
    source: 'issue 14; docs/design.md section 11.1',
  },
  {
    id: 'web.company-member-owner-only',
    attack: 'a member who is not the owner adding members, or removing the owner',
    source: 'docs/design.md section 11.1',
  },
  {
    id: 'web.viewer-changes-nothing',
    attack:
      "a company's viewer sending the forms of a developer: rotating a signing secret, setting a callback address, sending a test event, making an API secret, changing the details",
    source: 'issue 31; docs/design.md section 11.1',
  },
  {
    id: 'web.member-foreign-household',
    attack:
      "a member of one barrier's household asks for another household's barrier page, journal or CSV, or posts its key withdrawal, shape change, invitation or member removal",
    source: 'docs/design.md section 9.2',
  },
  {
    id: 'web.invitation-other-account',
    attack:
      'another account follows an invitation link that reached it (forwarded, or seen over a shoulder) and accepts it, to join a household it was not invited to',
    source: 'docs/design.md section 9.2',
  },
  {
    id: 'web.company-member-unconfirmed',
    attack: "becoming a company's member by typing the added address on an account without confirming it",
    source: 'docs/design.md section 11.1',
  },
  {
    id: 'web.company-domain-squat',
    attack: "registering another company's domain first, to keep its real owner out or to inherit its calls",
    source: 'docs/design.md section 11.1',
  },
  {
    id: 'web.access-other-company',
    attack:
      "a member of one company opens another company's API access page, or posts its key check, proof, rotation or secret forms",
    source: 'issue 14; docs/design.md section 11.2',
  },
  {
    id: 'web.secret-shown-twice',
    attack: 'a reload, a GET or the same form sent twice shows a secret again, or issues another one unasked',
    source: 'issue 14; docs/design.md section 11.2',
  },
  {
    id: 'web.secret-expired-by-another-company',
    attack:
      "a member of one company ends another company's retiring secret, through that company's form or by naming the secret's id under its own",
    source: 'issue 31; docs/design.md section 11.2',
  },
  {
    id: 'api.listen-flood',
    attack:
      "one company opens listen streams without end, to hold the cloud's connections and memory (a fifth is refused; a slow reader is sent nothing more until it reads)",
    source: 'issue 31; docs/design.md section 6.1',
  },
  {
    id: 'api.listen-foreign',
    attack: "listen with a wrong secret or half a credential, to read another company's events",
    source: 'issue 31; docs/design.md section 6.1',
  },
  {
    id: 'web.event-resent-by-another-company',
    attack:
      "a member of one company has another company's delivered event sent again, by naming its id under its own company, to make the service post it twice",
    source: 'issue 31; docs/design.md section 6',
  },
  {
    id: 'web.signing-secret-shown-twice',
    attack:
      'the form that made a callback signing secret sent again (a reload, a second click) to have the secret shown once more, or a second one made',
    source: 'issue 31; docs/design.md section 11.4',
  },
  {
    id: 'web.signing-secret-of-another-company',
    attack:
      "a member of one company rotates another company's callback signing secret through its form, or expires it by naming its id under its own company",
    source: 'issue 31; docs/design.md section 11.4',
  },
  {
    id: 'web.endpoint-of-another-company',
    attack:
      "a member of one company reads, readdresses, removes, retries or sends events to another company's callback endpoint by naming its id under its own company, or under the sandbox's",
    source: 'docs/design.md section 6.2',
  },
  {
    id: 'web.key-proof-forged',
    attack:
      "a proof of holding the domain's key signed by another key, made for another company, over other text, or malformed; or a key rotation confirmed without holding the new key",
    source: 'issue 14; docs/design.md section 11.2',
  },
  {
    id: 'company.tool-signs-call-as-proof',
    attack: "the key-pair tool's prove command is handed an API call's base string to sign as a 'proof'",
    source: 'docs/design.md section 11.2',
  },
  {
    id: 'web.logo-other-company',
    attack:
      "a member of one company seeing, replacing or removing another company's logo by changing the id in the address",
    source: 'issue 14; docs/design.md section 11.3',
  },
  {
    id: 'web.logo-svg',
    attack:
      'an SVG logo (script and external references inside an image), or a GIF, AVIF, TIFF or other format passed off as a logo',
    source: 'issue 14; docs/design.md section 11.3',
  },
  {
    id: 'web.logo-mismatch',
    attack:
      'a file whose content is not what its name or declared type says, such as JPEG bytes named logo.png',
    source: 'issue 14; docs/design.md section 11.3',
  },
  {
    id: 'web.logo-bomb',
    attack:
      'a decompression bomb: a file of a few bytes whose header declares 30000 x 30000 pixels, to exhaust memory when decoded',
    source: 'issue 14; docs/design.md section 11.3',
  },
  {
    id: 'web.logo-metadata',
    attack:
      "a logo that would pass the uploader's EXIF, ICC or XMP data (names, places, cameras) on to every customer",
    source: 'issue 14; docs/design.md section 11.3',
  },
  {
    id: 'web.logo-oversized',
    attack:
      'a logo over 1 MiB, to fill memory or the database, or to get an error page instead of the reason',
    source: 'issue 14; docs/design.md section 11.3',
  },
  {
    id: 'web.logo-csrf',
    attack:
      "another site posting a logo upload in a member's browser, without the page's token or from its own origin",
    source: 'issue 14; docs/design.md section 11.3',
  },
  {
    id: 'web.logo-flood',
    attack: 'uploading logos without end, to keep the service decoding images',
    source: 'issue 14; docs/design.md section 11.3',
  },
  {
    id: 'web.callback-private',
    attack:
      'a callback address on http, with credentials, on a loopback, private or mapped IP, or on a name resolving to one (even among public answers)',
    source: 'issue 14; docs/design.md section 11.4',
  },
  {
    id: 'web.company-journal-other-company',
    attack:
      "a company reading another company's openings on a barrier both hold keys to, or the customer's own name for the barrier",
    source: 'docs/design.md section 11.4',
  },
  {
    id: 'web.console-customer',
    attack:
      'a visitor or a signed-in customer opening console pages or posting approvals, refusals and grants',
    source: 'issue 14; docs/design.md section 11.5',
  },
  {
    id: 'web.console-member',
    attack: "a company's own owner or member approving their company through the console",
    source: 'issue 14; docs/design.md section 11.5',
  },
  {
    id: 'web.console-token-guess',
    attack: 'guessing the operator token at the console sign-in, without end from one address',
    source: 'issue 14; docs/design.md section 11.5',
  },
  {
    id: 'web.console-csrf',
    attack: "a form on another site posting a console action with an operator's cookies",
    source: 'issue 14; docs/design.md section 11.5',
  },
  {
    id: 'events.hostile-answer',
    attack:
      'a callback receiver answering with an endless body, or with a NUL the database cannot store, to hold the delivery worker or break the write of its turn so that events are sent again and again',
    source: 'issue 31; docs/design.md section 6',
  },
  {
    id: 'events.callback-private-address',
    attack:
      'a callback address that is, resolves to, or connects to a loopback or private address (DNS rebinding after it was saved), or plain http, to make the cloud post into its own network',
    source: 'issue 15, item 3; docs/design.md section 6',
  },
  {
    id: 'events.callback-redirect',
    attack:
      'a callback endpoint that answers with a redirect to an address the cloud would not post to itself',
    source: 'issue 15, item 3; docs/design.md section 6',
  },
  {
    id: 'webhook.tampered-body',
    attack:
      "a delivery to a company's callback address with its body, webhook-id or webhook-timestamp changed on the way",
    source: 'cloud/README.md "Verifying a delivery"; docs/design.md section 11.6',
  },
  {
    id: 'webhook.replayed',
    attack: "an old, validly signed delivery sent again to a company's callback address, or one dated ahead",
    source: 'cloud/README.md "Verifying a delivery"; docs/design.md section 11.6',
  },
  {
    id: 'webhook.wrong-key',
    attack:
      "a delivery signed with a key other than the cloud's published one, or checked with a small-order key that a lenient verifier would accept any signature under",
    source: 'cloud/README.md "Verifying a delivery"; docs/design.md sections 2 and 11.6',
  },
  {
    id: 'receipts.edited-entry',
    attack:
      "a sealed journal entry edited in the database (its actor, outcome or times), to make the customer's receipts say otherwise",
    source: 'issue 28; docs/design.md section 5.3',
  },
  {
    id: 'receipts.deleted-entry',
    attack: 'a sealed journal entry deleted from the database, in the middle of the chain or at its end',
    source: 'issue 28; docs/design.md section 5.3',
  },
  {
    id: 'receipts.swapped-entries',
    attack: 'two sealed journal entries swapped: their places in the chain, or their contents',
    source: 'issue 28; docs/design.md section 5.3',
  },
  {
    id: 'receipts.forged-ack',
    attack:
      'an opening recorded with an acknowledgement the controller did not sign, to prove an opening that never happened',
    source: 'issue 28; docs/design.md section 5.3',
  },
];
