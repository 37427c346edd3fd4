import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Certificates made with the real `openssl` for the mutual-TLS tests: a CA,
 * a server certificate for 127.0.0.1 / localhost it issued, client
 * certificates it issued, and a second CA whose certificates the node must
 * not accept. P-256 keys (fast to make); files in `dir`.
 */

/** A certificate and its key, as PEM files, with its SHA-256 fingerprint (`AB:CD:…`). */
export interface CertificateFiles {
  cert: string;
  key: string;
  fingerprint256: string;
}

/** A CA that issues server and client certificates. */
export interface TestCa extends CertificateFiles {
  /** A server certificate for 127.0.0.1 and localhost. */
  server(name: string): CertificateFiles;
  /** A client certificate with subject `CN=<cn>, O=Lango Test`. */
  client(cn: string): CertificateFiles;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function files(dir: string, name: string): CertificateFiles {
  const cert = path.join(dir, `${name}.crt`);
  return {
    cert,
    key: path.join(dir, `${name}.key`),
    fingerprint256: new X509Certificate(fs.readFileSync(cert)).fingerprint256,
  };
}

/**
 * Makes a CA named `name` in `dir`.
 * @example
 * const ca = makeCa(dir, 'ca'); const server = ca.server('node-b'); const client = ca.client('node-a');
 */
export function makeCa(dir: string, name: string): TestCa {
  openssl(
    [
      'req',
      '-x509',
      ...EC,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-subj',
      `/CN=${name} test CA`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  const issue = (leaf: string, subject: string, extensions: string): CertificateFiles => {
    openssl(['req', ...EC, '-keyout', `${leaf}.key`, '-out', `${leaf}.csr`, '-subj', subject], dir);
    fs.writeFileSync(path.join(dir, `${leaf}.ext`), extensions);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${leaf}.csr`,
        '-CA',
        `${name}.crt`,
        '-CAkey',
        `${name}.key`,
        '-CAcreateserial',
        '-out',
        `${leaf}.crt`,
        '-days',
        '2',
        '-extfile',
        `${leaf}.ext`,
      ],
      dir,
    );
    return files(dir, leaf);
  };
  return {
    ...files(dir, name),
    server: (leaf) =>
      issue(
        `${name}-${leaf}`,
        '/CN=127.0.0.1',
        'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n',
      ),
    client: (cn) => issue(`${name}-${cn}`, `/CN=${cn}/O=Lango Test`, 'extendedKeyUsage=clientAuth\n'),
  };
}
