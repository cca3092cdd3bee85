import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * A certificate authority a test makes with openssl, as an operator would make their own, and the server
 * certificates it issues: real X.509, real chains, nothing pre-baked in the repository.
 */
const run = promisify(execFile);

export interface IssuedCertificate {
  /** PEM files on disk, mode 0600 for the key. */
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

export interface TestCa {
  /** The CA's certificate (PEM) and its file: what `mqtt.ca_file` or `NODE_EXTRA_CA_CERTS` pins. */
  certFile: string;
  cert: string;
  folder: string;
  /**
   * A server certificate for `names` (DNS names, or IP addresses such as 127.0.0.1), valid from now for
   * `days`, signed by this CA. A certificate that does not verify is one for another name, or from another CA.
   */
  issue(names: readonly string[], options?: { days?: number; file?: string }): Promise<IssuedCertificate>;
  remove(): void;
}

let serial = 0;

export async function makeTestCa(commonName = 'Gatelink test CA'): Promise<TestCa> {
  const folder = mkdtempSync(join(tmpdir(), 'gatelink-ca-'));
  const caKey = join(folder, 'ca.key');
  const certFile = join(folder, 'ca.pem');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    certFile,
    '-days',
    '30',
    '-subj',
    `/CN=${commonName}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return {
    certFile,
    cert: readFileSync(certFile, 'utf8'),
    folder,
    async issue(names, options = {}) {
      const name = options.file ?? `server-${++serial}`;
      const keyFile = join(folder, `${name}.key`);
      const csr = join(folder, `${name}.csr`);
      const cert = join(folder, `${name}.pem`);
      const extensions = join(folder, `${name}.ext`);
      const alt = names.map((entry) => (/^[\d.]+$|:/.test(entry) ? `IP:${entry}` : `DNS:${entry}`)).join(',');
      writeFileSync(
        extensions,
        `subjectAltName=${alt}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`,
      );
      await run('openssl', [
        'req',
        '-new',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        csr,
        '-subj',
        `/CN=${names[0] ?? 'localhost'}`,
      ]);
      await run('openssl', [
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        certFile,
        '-CAkey',
        caKey,
        '-CAcreateserial',
        '-out',
        cert,
        '-days',
        String(options.days ?? 7),
        '-extfile',
        extensions,
      ]);
      return {
        certFile: cert,
        keyFile,
        cert: readFileSync(cert, 'utf8'),
        key: readFileSync(keyFile, 'utf8'),
      };
    },
    remove: () => rmSync(folder, { recursive: true, force: true }),
  };
}
