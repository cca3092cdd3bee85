import { networkInterfaces } from 'node:os';
import qrcode from 'qrcode-terminal';
import { type RunningCloud, startCloud } from '../cloud.js';
import { type CloudConfig, ConfigError, loadCloudConfig } from '../foundation/config.js';
import type { Mailer } from '../links/mail/mailer.js';
import { fetchKeyFile } from '../links/outbound-http/keyfile-fetch.js';
import { pairingCodeFor } from '../rules/devices/pairing-renewal.js';
import type { KeyFileFetcher } from '../rules/domain-keys/key-file.js';
import {
  DEMO_BARRIER,
  type DemoAddresses,
  type DemoController,
  SPARE_BARRIER,
  startDemoController,
} from './controller.js';
import {
  DEMO_COMPANY_EMAIL,
  DEMO_CUSTOMER_EMAIL,
  DEMO_DOMAIN,
  type DemoState,
  demoCompanyKey,
  demoCompanyKeyPath,
  loadOrSeed,
} from './seed.js';

/**
 * `npm start`: the whole system on one machine (docs/design.md section 8). The cloud with its embedded database
 * and broker, two simulated controllers (one paired to a demo customer, a spare one for the account a visitor
 * makes), and calls to copy that work as printed.
 */
const say = (line = '') => process.stdout.write(`${line}\n`);

/**
 * An operator command as it works when typed in another terminal of this folder: gatelink-admin finds this cloud
 * through the data folder it runs on, so a folder other than the default is named (cloud/README.md, "Operator
 * API").
 */
function adminCommand(args: string): string {
  return `${startedWith(['GATELINK_DATA_DIR'])}npm run admin -- ${args}`;
}

async function main(): Promise<void> {
  // What the demo and its controller write is their owner's alone (cloud/README.md, "The data folder").
  process.umask(0o077);
  const config = loadConfigOrExit();
  const courierKey = demoCompanyKey(config.dataDir);
  // The demo courier's domain does not exist, so its key file is answered here; every other domain is
  // fetched for real.
  const fetcher: KeyFileFetcher = (domain) =>
    domain === DEMO_DOMAIN
      ? Promise.resolve({ ok: true, key: courierKey.publicKey })
      : fetchKeyFile(domain, config.devKeyfileUrl ? { devUrlTemplate: config.devKeyfileUrl } : {});

  say('Starting Gatelink...');
  const cloud = await startCloud({
    config,
    fetchKeyFile: fetcher,
    program: 'npm start',
    // With no mail server, the person trying the demo reads the code here (docs/design.md section 10.2).
    ...(config.smtpUrl ? {} : { mailer: terminalMailer }),
  }).catch(explainStartFailure);
  const controllers: DemoController[] = [];
  const stopControllers = async () => {
    for (const controller of controllers.splice(0)) await controller.stop();
  };
  const stop = async () => {
    say('\nStopping...');
    await stopControllers();
    await cloud.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    const addresses = demoAddresses(cloud, config.mqtt);
    const state = await loadOrSeed(cloud.ctx, addresses.cloud, say);
    controllers.push(
      await startDemoController(cloud.ctx, config.dataDir, state.deviceId, DEMO_BARRIER, addresses),
    );
    const spareId = state.spareDeviceId!;
    controllers.push(await startDemoController(cloud.ctx, config.dataDir, spareId, SPARE_BARRIER, addresses));
    const qrUrl = await freshRequestUrl(cloud, state);
    const pairing = await pairingCodeFor(cloud.ctx, spareId);
    printWelcome(cloud, state, config.dataDir);
    printCustomerSteps(cloud, state, qrUrl, pairing);
  } catch (error) {
    say(`The demo could not start: ${error instanceof Error ? error.message : String(error)}`);
    // Never advice to delete the data: each message says what to fix (docs/design.md section 8).
    say(`The data in ${config.dataDir} is kept as it was: fix what the message says, then start again.`);
    await stopControllers();
    await cloud.stop();
    process.exit(1);
  }
}

const terminalMailer: Mailer = {
  async sendCode(message) {
    say();
    say(
      `  Sign-in code for ${message.to}: ${message.code}   (valid ${message.validMinutes} minutes, works once;`,
    );
    say('  no SMTP_URL is set, so it is shown here instead of being e-mailed)');
    say();
  },
  async sendNotice(message) {
    say();
    say(`  E-mail to ${message.to}: ${message.subject}   (no SMTP_URL is set, so it is shown here)`);
    // The demo's person has no inbox: the way to stop the e-mails of openings is shown with them.
    const unsubscribe = message.headers?.['List-Unsubscribe'];
    if (unsubscribe) say(`  To stop these e-mails: ${unsubscribe.replace(/^<|>$/g, '')}`);
    say();
  },
};

/**
 * How a phone on the same network gets in (README.md, "Try it"): the demo listens on 127.0.0.1 and its links name
 * localhost, which a phone cannot open; HOST opens the listener, BASE_URL puts this machine's address in the links
 * and the QR code.
 */
function phoneHint(base: string): string[] {
  const host = new URL(base).hostname;
  if (!['localhost', '127.0.0.1', '[::1]'].includes(host)) return [`Phones on your network open ${base}.`];
  const lan = Object.values(networkInterfaces())
    .flat()
    .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;
  const port = new URL(base).port || '80';
  return lan
    ? [
        'A phone cannot open localhost. To let a phone on the same network in, stop and start again with:',
        `${startedWith(['GATELINK_DATA_DIR', 'MQTT_PORT', 'PORT'])}HOST=0.0.0.0 BASE_URL=http://${lan}:${port} npm start`,
        'Passkeys need https or localhost, so on the phone sign in with an e-mail code.',
      ]
    : ['A phone cannot open localhost, and this machine has no network address for one to use.'];
}

/** The settings of this start among `names`, as a shell prefix, so that a printed command starts the same. */
function startedWith(names: readonly string[]): string {
  return names
    .filter((name) => process.env[name])
    .map((name) => `${name}=${process.env[name]} `)
    .join('');
}

function loadConfigOrExit() {
  try {
    // The demo talks to a person: service logs only when something is wrong, unless LOG_LEVEL says otherwise.
    // It listens on this machine only, unless HOST says otherwise (README.md, "Try it").
    return loadCloudConfig({ LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...process.env });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`gatelink: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

function explainStartFailure(error: unknown): never {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    process.stderr.write(
      `gatelink: a port is in use (${(error as Error).message}). Stop the other program, or start with other ports: ${startedWith(['GATELINK_DATA_DIR', 'HOST'])}PORT=8090 MQTT_PORT=1894 npm start\n`,
    );
  } else {
    process.stderr.write(
      `gatelink could not start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
  process.exit(1);
}

/**
 * The demo's controllers run on this machine: they use the cloud's listening address, and the embedded
 * broker's port on the same host. An external broker is reached at its own address.
 */
function demoAddresses(cloud: RunningCloud, mqtt: CloudConfig['mqtt']): DemoAddresses {
  if (mqtt.kind === 'external') return { cloud: cloud.localUrl, broker: cloud.controllerLink.deviceUrl };
  // Without MQTT_PUBLIC_URL the devices' address carries the port the broker listens on (MQTT_PORT 0: the
  // system's choice); with it, that port may be a proxy's, and with TLS on it is the TLS listener's, where the
  // demo's controllers (plain MQTT, on this machine) have MQTT_PORT.
  const port =
    mqtt.publicUrl === undefined && !mqtt.tls
      ? new URL(cloud.controllerLink.deviceUrl).port
      : String(mqtt.port);
  return { cloud: cloud.localUrl, broker: `mqtt://${new URL(cloud.localUrl).hostname}:${port}` };
}

/** A new request by the secret-mode company, made through the API itself, for the QR code. */
async function freshRequestUrl(cloud: RunningCloud, state: DemoState): Promise<string> {
  const response = await fetch(`${cloud.localUrl}/api/company.php?a=request`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      org_id: state.secretCompany.orgId,
      secret: state.secretCompany.secret,
      ref: 'DEMO-QR',
      ttl_hours: 1,
    }),
  });
  const body = (await response.json()) as { url?: string; message?: string };
  if (!body.url) throw new Error(`the demo request failed: ${body.message ?? response.status}`);
  return body.url;
}

function printWelcome(cloud: RunningCloud, state: DemoState, dataDir: string): void {
  const base = cloud.baseUrl;
  const { orgId, secret } = state.secretCompany;
  const [gate] = state.key.numberIds;
  say();
  say(`Gatelink is running at ${base}`);
  say(`  database: PGlite in ${dataDir}   broker for controllers: ${cloud.controllerLink.deviceUrl}`);
  say(`  operator token: ${cloud.operatorTokenFile ?? 'from OPERATOR_TOKEN'}`);
  say(
    `  demo controllers (simulated outputs) online: ${DEMO_BARRIER.label} ${state.deviceId}, paired to the`,
  );
  say(`  demo customer; ${SPARE_BARRIER.label} ${state.spareDeviceId}, for the account you make below`);
  say();
  say('The company API, as a company calls it:');
  say();
  say(
    '1. Open the demo barrier, as Demo Cleaning Ltd (secret mode), with the key the demo customer granted:',
  );
  say(
    `   curl -s -X POST '${base}/api/company.php?a=open' -H 'Content-Type: application/json' \\\n     -d '{"org_id":${orgId},"secret":"${secret}","key_ref":${state.key.keyRef},"number_id":${gate},"actor":"Anna, shift 2"}'`,
  );
  say('   answers {"ok":1,"id":...} once the controller confirms; then see the journal:');
  say(`   ${adminCommand('journal')}`);
  say();
  say('2. Ask for access (secret mode):');
  say(
    `   curl -s -X POST '${base}/api/company.php?a=request' -H 'Content-Type: application/json' \\\n     -d '{"org_id":${orgId},"secret":"${secret}","ref":"ORDER-42","ttl_hours":48}'`,
  );
  say();
  say(
    `3. A signed call (signature mode), as the courier ${DEMO_DOMAIN}, with its key ${demoCompanyKeyPath(dataDir)}:`,
  );
  say(`   BODY='{"code":"${state.courier.code}"}'; TS=$(date +%s); NONCE=$(openssl rand -hex 16)`);
  say(
    `   printf %s "${DEMO_DOMAIN}.$TS.$NONCE.$(printf %s "$BODY" | sha256sum | cut -d' ' -f1)" > /tmp/gatelink-base`,
  );
  say(
    `   SIG=$(openssl pkeyutl -sign -inkey ${demoCompanyKeyPath(dataDir)} -rawin -in /tmp/gatelink-base | base64 -w0)`,
  );
  say(
    `   curl -s -X POST '${base}/api/company.php?a=status' -H 'Content-Type: application/json' \\\n     -H "X-Service-Org: ${DEMO_DOMAIN}" -H "X-Service-Ts: $TS" -H "X-Service-Nonce: $NONCE" -H "X-Service-Sig: $SIG" -d "$BODY"`,
  );
  say();
  say(
    '4. The opening of step 1 with the TypeScript client (cloud/README.md, "The TypeScript client"), run in',
  );
  say('   this folder:');
  say(`   node --input-type=module -e "import { GatelinkClient } from 'gatelink/client';`);
  say(
    `   const client = new GatelinkClient({ baseUrl: '${base}', auth: { orgId: ${orgId}, secret: '${secret}' } });`,
  );
  say(
    `   console.log(await client.open({ key_ref: ${state.key.keyRef}, number_id: ${gate}, actor: 'Anna, shift 2' }));"`,
  );
  say();
  say(`Operators: ${adminCommand('company list')}   (also device list, journal; --json for machines)`);
  const token = cloud.operatorTokenFile ? `$(cat ${cloud.operatorTokenFile})` : '$OPERATOR_TOKEN';
  say(`  metrics: curl -s -H "Authorization: Bearer ${token}" ${base}/metrics`);
  say(`The API: cloud/README.md, and ${base}/api/reference (as OpenAPI 3.1: ${base}/api/openapi.json).`);
  say('Stop with Ctrl-C; the data stays in the data folder for the next start.');
}

/**
 * The customer's half, in a browser (docs/design.md section 8): the fresh request's link, signing up, adding
 * the spare controller with its pairing code, granting, then the company's `open` with the key just granted,
 * which shows in the new account's journal, and withdrawing.
 */
function printCustomerSteps(
  cloud: RunningCloud,
  state: DemoState,
  qrUrl: string,
  pairing: { code: string; expiresAt: Date } | null,
): void {
  const base = cloud.baseUrl;
  const { orgId, secret } = state.secretCompany;
  const code = new URL(qrUrl).pathname.split('/').pop() ?? '';
  const credentials = `"org_id":${orgId},"secret":"${secret}"`;
  say();
  say('Play the customer, in a browser:');
  say();
  say('A. Demo Cleaning Ltd asks for access: open its link (or scan the QR code):');
  qrcode.generate(qrUrl, { small: true }, (text) => say(text));
  say(`   ${qrUrl}`);
  for (const line of phoneHint(base)) say(`   ${line}`);
  say('B. Sign up there: with a passkey, or with a one-time code by e-mail (no SMTP_URL is set, so the code');
  say('   is printed in this window).');
  say(
    pairing
      ? `C. Add your barrier with the pairing code ${pairing.code} (valid until ${pairing.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC), then grant.`
      : `C. ${SPARE_BARRIER.label} is already in an account: sign in to it and grant with it.`,
  );
  say(
    'D. Open as the company with the key you granted: the first call reads key_ref and numbers from status,',
  );
  say("   the second opens the first object. Then look at your barrier's journal:");
  say(
    `   R=$(curl -s -X POST '${base}/api/company.php?a=status' -H 'Content-Type: application/json' -d '{${credentials},"code":"${code}"}'); echo "$R"`,
  );
  say(
    `   curl -s -X POST '${base}/api/company.php?a=open' -H 'Content-Type: application/json' \\\n     -d "$(node -p 'const s = JSON.parse(process.argv[1]); JSON.stringify({${credentials},key_ref: s.key_ref, number_id: s.numbers[0].number_id, actor: "Anna, shift 2"})' "$R")"`,
  );
  say(
    '   The first object is the Front gate: reload the journal and its line tells the whole opening, "gate open',
  );
  say(
    '   after 1.5 s", then, 20 s on, "closed after 20 s"; its steps open under the line. numbers[1], the Side',
  );
  say(
    '   gate, is stuck: its line says "relay fired, gate did not move". numbers[2], the Garage door, stays open',
  );
  say(
    '   until opened again: on the barrier page set "stays open longer than" to 1 minute, and after a minute',
  );
  say('   your list of barriers shows it left open (and the company gets gate.left_open).');
  say('   The journal page exports its receipts: check them with the verifier the page links to,');
  say(`   ${base}/receipts (entries are sealed once final, within seconds).`);
  say(
    `E. Be told, and be asked: on ${base}/account press "Turn on notifications" (a browser that can push; on an`,
  );
  say(
    '   iPhone, add the app to the home screen first) and run D again: "Front gate: Opened" shows at once. Then,',
  );
  say(
    '   on the barrier page, "Change when Demo Cleaning Ltd may open", choose "Ask me first" and save: run D again',
  );
  say(
    '   and the call waits; press Allow on the notification (or on the barrier page) and it answers {"ok":1,...};',
  );
  say(
    '   Deny answers 403 denied, and no answer within the wait 403 not_answered. The journal says who answered.',
  );
  say('F. Withdraw the access on the barrier page and run D again: 403 revoked, and the journal shows it.');
  say(
    `A gate that opens when your phone calls it: ${base}/barriers/phone gives the one command to paste into`,
  );
  say(
    '   Termux on an Android phone; it installs the controller release an operator rolled out to all controllers,',
  );
  say("   asks for the gate's number and pairs the phone to your account (docs/design.md section 9.3).");
  say();
  say(`The demo customer, who owns ${DEMO_BARRIER.label}, signs in with the e-mail ${DEMO_CUSTOMER_EMAIL}`);
  say(`(the code is printed here): ${base}/signin`);
  say();
  say('Play the company and the operator, in a browser:');
  say(
    `G. Demo Cleaning Ltd's account area (its requests, openings, secret, logo, members): sign in at ${base}/company`,
  );
  say(`   with the e-mail ${DEMO_COMPANY_EMAIL} (the code is printed here).`);
  say('   Its events, on this machine and with no public address: in one terminal');
  say(`     export GATELINK_URL=${base} GATELINK_ORG_ID=${orgId} GATELINK_SECRET=${secret}`);
  say('     npm run company -- listen --forward-to http://localhost:3000/hook');
  say(
    '   and in another, with the same variables, npm run company -- trigger open.succeeded (or run D again):',
  );
  say(
    "   each event prints with your receiver's answer (none yet: ECONNREFUSED). Up to ten callback endpoints,",
  );
  say(
    '   each with its kinds, signing secret and log of what was sent to it, are on the Callback and Events',
  );
  say(
    "   pages; an event's id opens its body and each attempt's request and answer. Members, as developers or",
  );
  say('   viewers, on Members; who changed what, and when, on Activity.');
  say(
    `H. Register a company of your own at ${base}/company/new; it waits for an operator, who approves it in the`,
  );
  say(`   console at ${base}/console with the operator token (in the file named above); the e-mail that`);
  say('   tells your company so is shown here. Meanwhile its sandbox answers every call that says');
  say('   "sandbox": true, with a simulated customer and barrier: its API access page gives it a sandbox');
  say('   secret, and its Sandbox page grants, withdraws and makes the barrier fail as a real one can,');
  say('   and sends the sandbox\'s events to an address of their own (cloud/README.md, "The sandbox").');
}

main().catch((error: unknown) => {
  process.stderr.write(`gatelink: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
