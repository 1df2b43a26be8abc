/**
 * A Redfish node's console: where it is comes from its ComputerSystem's `SerialConsole`
 * (adapters/standalone/redfish-inventory.ts readSerialConsole), read once when the session starts and
 * again when the BMC refuses the SSH shell (`not_offered`). Then, in this order:
 * - `SSH.ServiceEnabled`: an SshSession to the BMC's host at `SSH.Port`, its host key pinned;
 * - `IPMI.ServiceEnabled`: a SolSession to the BMC's host (at `IPMI.Port` when not 623);
 * - neither: no console, state `not offered` (the capture says so once at info).
 * A failed read (BMC unreachable, bad answer) is tried again after a backoff that doubles to a ceiling.
 */
import type { BmcTarget } from '../adapters/standalone/bmc.ts';
import type { BmcGuard } from '../adapters/standalone/bmc-guard.ts';
import type { RedfishClient } from '../adapters/standalone/redfish.ts';
import { readSerialConsole, type SerialConsoleWay } from '../adapters/standalone/redfish-inventory.ts';
import { SolSession, type SolOptions } from './sol.ts';
import { SshSession, type SshOptions } from './ssh.ts';

export interface RedfishConsoleOptions {
  redfish: RedfishClient;
  /** SerialConsole reads go through it: one call at a time per BMC, a bound on all, circuits. */
  guard: BmcGuard;
  sol?: SolOptions;
  ssh?: SshOptions;
}

export class RedfishConsole {
  /** The way chosen by the last read ('' = not read yet). */
  way: SerialConsoleWay['way'] | '' = '';
  private inner?: SshSession | SolSession;
  private readErrors = 0;
  private readError = '';
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private reading = false;

  constructor(
    private readonly target: BmcTarget & { hostKey: string },
    private readonly onText: (text: string) => void,
    private readonly onFirstHostKey: (fingerprint: string) => void,
    private readonly o: RedfishConsoleOptions,
  ) {
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
    readSerialConsole(this.o.redfish, this.o.guard, this.target).then(
      (w) => {
        this.reading = false;
        this.readError = '';
        if (!this.stopped) this.use(w);
      },
      (e: unknown) => {
        this.reading = false;
        this.readError = e instanceof Error ? e.message : String(e);
        const wait = Math.min((this.o.ssh?.backoffMs ?? 1000) * 2 ** this.readErrors++, this.o.ssh?.maxBackoffMs ?? 60_000);
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
        (fp) => {
          this.target.hostKey = fp;
          this.onFirstHostKey(fp);
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
