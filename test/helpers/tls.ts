/**
 * A self-signed certificate for 127.0.0.1, made with the machine's openssl, for the tests that serve
 * HTTPS (the simulator's services and Redfish BMCs, the API itself). `openssl` is undefined where the
 * binary is missing; those tests skip.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const openssl = ['/usr/bin/openssl', '/usr/local/bin/openssl'].find(existsSync);

export interface LoopbackCert {
  dir: string;
  /** PEM files: the certificate doubles as the CA bundle a client trusts. */
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

export function loopbackCert(prefix = 'bootorch-tls-'): LoopbackCert {
  if (!openssl) throw new Error('no openssl on this machine');
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync(
    openssl,
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { dir, certFile, keyFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}
