/**
 * One node's serial console over its BMC's SSH console (Redfish ComputerSystem `SerialConsole.SSH`):
 * an in-process ssh2 connection with the node's BMC login (password authentication), a shell on a dumb
 * pty, and the BMC's `ConsoleEntryCommand` sent when it names one (iDRAC `console com2`, Supermicro
 * `start /system1/sol1`). Everything the shell prints is console text, handed to `onText`.
 *
 * The BMC's host key is pinned: with no pin yet, the key seen is handed to `pinFirstHostKey` (the capture
 * stores its fingerprint on the node unless one is stored already, and answers the stored one) and the
 * handshake goes on only if the stored pin is that key, so two sessions racing to pin cannot both
 * trust what they saw; a different key afterwards is refused before the password is sent, with
 * `host_key_changed` in lastError and one warn line naming the node and both fingerprints.
 *
 * As SolSession: a connection that ends, or is not operational within the activation deadline, is
 * tried again after a jittered backoff that doubles up to a ceiling and starts over once a session has
 * held that long (backoff.ts); a refused login waits `authRetryMs` (many BMCs lock an account after a
 * few failed logins, and the power calls use the same one); at most HANDSHAKES_AT_ONCE handshakes run
 * at once in the process, so 10,000 BMCs coming back together queue rather than time out. A session
 * silent too long is connected again (reactivateIfIdle); `stop()` ends it for good.
 */
import { createHash } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { Logger } from 'pino';
import { createRequire } from 'node:module';
import type * as Ssh2 from 'ssh2';
import type { BmcTarget } from '../adapters/standalone/bmc.ts';
import { Turns } from '../domain/lists.ts';
import { Backoff } from './backoff.ts';

/** SSH handshakes (key exchange, host key, login) in flight at once in this process. */
export const HANDSHAKES_AT_ONCE = 32;
const handshakes = new Turns(HANDSHAKES_AT_ONCE);

/**
 * ssh2 is loaded from node_modules, not bundled into dist/ (scripts/build.mjs): it looks for optional
 * native code of its own (cpu-features, its crypto binding) that a bundle cannot hold. Loaded at the
 * first session, not at start-up (about 30 ms), as most processes never open one.
 */
let ssh2: typeof Ssh2 | undefined;
const lib = () => (ssh2 ??= createRequire(import.meta.url)('ssh2') as typeof Ssh2);

export interface SshOptions {
  /** A session without its shell this long after starting is ended and tried again, ms (default 20000). */
  activateTimeoutMs?: number;
  /** First wait before trying again, ms (default 1000); doubles up to maxBackoffMs. */
  backoffMs?: number;
  /** Longest wait before trying again, ms (default 60000). */
  maxBackoffMs?: number;
  /** The wait after the BMC refused the login, ms (default 900000, 15 min): not a lockout's pace. */
  authRetryMs?: number;
  /** SSH keepalive period, ms (default 60000): a BMC gone without a word is noticed within three. */
  keepaliveMs?: number;
  log?: Logger;
}

export interface SshTarget extends BmcTarget {
  host: string;
  port: number;
  /** Sent once the shell is open ('' = the shell is the console). */
  entryCommand: string;
  /** The pinned host key fingerprint (`SHA256:...`, '' = none yet). */
  hostKey: string;
}

export type SshState = 'connecting' | 'operational' | 'waiting';

/**
 * Why the last connection ended: the named start of lastError. `not_offered`: the BMC took the login
 * but refused a shell (its console is not on SSH, the capture reads SerialConsole again).
 */
export type SshProblem = 'host_key_changed' | 'auth_refused' | 'not_offered' | 'unreachable' | 'timeout' | 'closed' | 'idle';

/** OpenSSH's form: `SHA256:` and the unpadded base64 of the key blob's SHA-256. */
export const fingerprintOf = (key: Buffer): string => `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;

export class SshSession {
  state: SshState = 'connecting';
  /** Sessions that ended and were started again. */
  reconnects = 0;
  lastError = '';
  problem?: SshProblem;
  private client?: Ssh2.Client;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private readonly backoff: Backoff;
  /** When the current session's shell opened (undefined: it has not). */
  private openedAt?: number;
  private lastTextAt = 0;
  /** The refused fingerprint already logged (one warn line per different key, not per try). */
  private warned = '';
  /** This try's host key was refused (verify() said why). */
  private keyRefused = false;

  constructor(
    private readonly target: SshTarget,
    private readonly onText: (text: string) => void,
    /** Stores `fingerprint` as the node's pin unless one is stored, and answers the stored pin ('' when none could be stored). */
    private readonly pinFirstHostKey: (fingerprint: string) => Promise<string>,
    private readonly o: SshOptions = {},
  ) {
    this.backoff = new Backoff(o.backoffMs ?? 1000, o.maxBackoffMs ?? 60_000);
    this.start();
  }

  private fail(problem: SshProblem, detail: string): void {
    this.problem = problem;
    this.lastError = `${problem}: ${this.target.id} (BMC SSH ${this.target.host}:${this.target.port}): ${detail}`;
  }

  private async verify(key: Buffer): Promise<boolean> {
    const seen = fingerprintOf(key);
    let pinned = this.target.hostKey;
    if (!pinned) {
      // Trusted only once it is the node's stored pin: another session (or process) may have pinned first.
      pinned = await this.pinFirstHostKey(seen).catch(() => '');
      if (!pinned) {
        this.keyRefused = true;
        this.fail('host_key_changed', `host key ${seen} could not be pinned; nothing captured`);
        return false;
      }
      this.target.hostKey = pinned;
    }
    if (seen === pinned) return true;
    this.keyRefused = true;
    this.fail('host_key_changed', `host key ${seen} is not the pinned ${pinned}; nothing captured`);
    if (this.warned !== seen) {
      this.warned = seen;
      this.o.log?.warn(
        { xname: this.target.id, pinned, seen, bmc: `${this.target.host}:${this.target.port}` },
        'console capture: BMC SSH host key changed, refused',
      );
    }
    return false;
  }

  private start(): void {
    if (this.stopped) return;
    this.state = 'connecting';
    const client = new (lib().Client)();
    this.client = client;
    let operational = false;
    const limit = this.o.activateTimeoutMs ?? 20_000;
    // Armed when the handshake's turn comes: a session waiting for its turn is not timing out.
    let deadline: NodeJS.Timeout | undefined;
    client.on('ready', () => {
      // A dumb pty: BMC command shells want a terminal, and a dumb one asks for no escape sequences.
      client.shell({ term: 'dumb', cols: 200, rows: 50 }, (err: Error | undefined, stream: Ssh2.ClientChannel) => {
        if (err) {
          this.fail('not_offered', `the BMC refused a shell: ${err.message}`);
          client.end();
          return;
        }
        operational = true;
        clearTimeout(deadline);
        this.state = 'operational';
        this.lastTextAt = Date.now();
        this.openedAt = Date.now();
        this.problem = undefined;
        // A character split across two packets is decoded whole.
        const text = new StringDecoder('utf8');
        stream.on('data', (d: Buffer) => {
          this.lastTextAt = Date.now();
          const s = text.write(d);
          if (s) this.onText(s);
        });
        stream.stderr.on('data', () => {});
        stream.on('close', () => client.end());
        if (this.target.entryCommand) stream.write(`${this.target.entryCommand}\r`);
      });
    });
    client.on('error', (e: Error & { level?: string; code?: string }) => {
      if (this.keyRefused) return; // verify() said why
      if (e.level === 'client-authentication') this.fail('auth_refused', 'the BMC refused the login (user or password)');
      else if (e.level === 'client-timeout') this.fail('timeout', e.message);
      else this.fail('unreachable', e.code ?? e.message);
    });
    client.on('close', () => {
      clearTimeout(deadline);
      handshake.end();
      if (this.client === client) this.client = undefined;
      if (this.stopped) return;
      if (operational && !this.problem) this.fail('closed', 'the BMC ended the console session');
      // Not offered: no retry here; the owner reads where the console is again (RedfishConsole).
      if (this.problem === 'not_offered') this.state = 'waiting';
      else this.retry();
    });
    this.keyRefused = false;
    this.problem = undefined;
    const handshake = turnOnce();
    client.once('ready', () => handshake.end());
    void handshake.taken.then(() => {
      if (this.client !== client || this.stopped) return void handshake.end();
      deadline = setTimeout(() => {
        if (operational) return;
        this.fail('timeout', `no console shell within ${limit / 1000} s`);
        client.destroy();
      }, limit);
      client.connect({
        host: this.target.host,
        port: this.target.port,
        username: this.target.username,
        password: this.target.password,
        tryKeyboard: false,
        readyTimeout: limit,
        keepaliveInterval: this.o.keepaliveMs ?? 60_000,
        keepaliveCountMax: 3,
        hostVerifier: (key: Buffer, verified: (ok: boolean) => void) => {
          void this.verify(key).then(verified, () => verified(false));
        },
      });
    });
  }

  private retry(): void {
    this.state = 'waiting';
    this.reconnects++;
    this.backoff.ended(this.openedAt);
    this.openedAt = undefined;
    const wait = this.backoff.next(this.problem === 'auth_refused' ? (this.o.authRetryMs ?? 900_000) : 0);
    this.timer = setTimeout(() => this.start(), wait);
  }

  /** Connect again when an operational session has printed nothing for `idleMs` (as SolSession). */
  reactivateIfIdle(idleMs: number): boolean {
    if (idleMs <= 0 || this.state !== 'operational' || !this.client || Date.now() - this.lastTextAt < idleMs) return false;
    this.fail('idle', `no console output for ${Math.round(idleMs / 1000)} s: connected again`);
    this.client.destroy();
    return true;
  }

  /** End the session for good. */
  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const c = this.client;
    this.client = undefined;
    if (!c) return Promise.resolve();
    return new Promise((resolve) => {
      const done = setTimeout(resolve, 2000);
      c.once('close', () => {
        clearTimeout(done);
        resolve();
      });
      c.end();
    });
  }
}

/** A handshake's turn: `taken` when it may start, `end()` (once, whichever comes first) gives it back. */
function turnOnce(): { taken: Promise<void>; end(): void } {
  let ended = false;
  let held = false;
  const taken = handshakes.take().then(() => {
    held = true;
    if (ended) handshakes.give();
  });
  return {
    taken,
    end() {
      if (ended) return;
      ended = true;
      if (held) handshakes.give();
    },
  };
}
