/**
 * A Redfish node's console: where it is comes from its ComputerSystem's `SerialConsole`
 * (adapters/standalone/redfish-inventory.ts readSerialConsole), read once when the session starts and
 * again when the BMC refuses the SSH shell (`not_offered`). Then, in this order:
 * - `SSH.ServiceEnabled`: an SshSession to the BMC's host at `SSH.Port`, its host key pinned;
 * - `IPMI.ServiceEnabled`: a SolSession to the BMC's host (at `IPMI.Port` when not 623);
 * - neither: no console, state `not offered` (the capture says so once at info).
 * A failed read (BMC unreachable, bad answer) is tried again after a backoff that doubles to a ceiling.
 */
import { BmcError, type BmcTarget } from '../adapters/standalone/bmc.ts';
import type { BmcGuard } from '../adapters/standalone/bmc-guard.ts';
import type { RedfishClient } from '../adapters/standalone/redfish.ts';
import type { Turns } from '../domain/lists.ts';
import { readSerialConsole, type SerialConsoleWay } from '../adapters/standalone/redfish-inventory.ts';
import { SolSession, type SolOptions } from './sol.ts';
import { SshSession, type SshOptions } from './ssh.ts';
import { Backoff } from './backoff.ts';

export interface RedfishConsoleOptions {
  redfish: RedfishClient;
  /** SerialConsole reads go through it: one call at a time per BMC, a bound on all, circuits. */
  guard: BmcGuard;
  /**
   * SerialConsole reads in flight at once before the guard (the capture's, shared by its consoles): the
   * guard may be the power calls' own, and a capture starting over 10,000 nodes must not fill its turns.
   */
  reads: Turns;
  sol?: SolOptions;
  ssh?: SshOptions;
}

export class RedfishConsole {
  /** The way chosen by the last read ('' = not read yet). */
  way: SerialConsoleWay['way'] | '' = '';
  private inner?: SshSession | SolSession;
  private readErrors = 0;
  private readonly readBackoff: Backoff;
  private readError = '';
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private reading = false;

  constructor(
    private readonly target: BmcTarget & { hostKey: string },
    private readonly onText: (text: string) => void,
    /** Stores the first host key seen unless one is stored; answers the stored one (ssh.ts). */
    private readonly pinFirstHostKey: (fingerprint: string) => Promise<string>,
    private readonly o: RedfishConsoleOptions,
  ) {
    this.readBackoff = new Backoff(o.ssh?.backoffMs ?? 1000, o.ssh?.maxBackoffMs ?? 60_000);
    this.read();
  }

  get state(): string {
    if (this.way === 'none') return 'not offered';
    return this.inner?.state ?? (this.reading ? 'reading SerialConsole' : 'waiting');
  }

  get reconnects(): number {
    return this.inner?.reconnects ?? this.readErrors;
  }

  get lastError(): string {
    return this.inner?.lastError || this.readError;
  }

  private read(): void {
    if (this.stopped) return;
    this.reading = true;
    this.o.reads
      .run(() => readSerialConsole(this.o.redfish, this.o.guard, this.target))
      .then(
        (w) => {
          this.reading = false;
          this.readError = '';
          this.readBackoff.reset();
          if (!this.stopped) this.use(w);
        },
        (e: unknown) => {
          this.reading = false;
          this.readError = e instanceof Error ? e.message : String(e);
          this.readErrors++;
          // A refused login waits as an SSH one does (ssh.ts authRetryMs): BMCs lock accounts after a few.
          const refused = e instanceof BmcError && e.kind === 'refused_login';
          const wait = this.readBackoff.next(refused ? (this.o.ssh?.authRetryMs ?? 900_000) : 0);
          if (!this.stopped) this.timer = setTimeout(() => this.read(), wait);
        },
      );
  }

  private use(w: SerialConsoleWay): void {
    this.way = w.way;
    if (w.way === 'ssh')
      this.inner = new SshSession(
        { ...this.target, host: w.host, port: w.port, entryCommand: w.entryCommand },
        this.onText,
        async (fp) => {
          const pinned = await this.pinFirstHostKey(fp);
          if (pinned) this.target.hostKey = pinned;
          return pinned;
        },
        this.o.ssh,
      );
    else if (w.way === 'sol') this.inner = new SolSession({ ...this.target, address: w.address }, this.onText, this.o.sol);
  }

  /** As SolSession's; also reads SerialConsole again once the BMC refused the SSH shell. */
  reactivateIfIdle(idleMs: number): boolean {
    const inner = this.inner;
    if (inner instanceof SshSession && inner.problem === 'not_offered' && inner.state === 'waiting') {
      this.inner = undefined;
      this.readError = inner.lastError;
      void inner.stop();
      this.read();
      return true;
    }
    return inner?.reactivateIfIdle(idleMs) ?? false;
  }

  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    return this.inner?.stop() ?? Promise.resolve();
  }
}
