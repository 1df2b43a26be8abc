/**
 * The BMC guard (src/adapters/standalone/bmc-guard.ts) with a clock the test moves: the circuit opens
 * after N failures in a row, lets one probe through when its time is up, closes on an answer, stays
 * open twice as long after a failed probe (up to the cap), honours Retry-After on 429/503; one call
 * at a time per BMC (by host and port) and at most `concurrency` over all.
 */
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/adapters/errors.ts';
import { BmcGuard, bmcKey, markBusy, type GuardClock } from '../../src/adapters/standalone/bmc-guard.ts';
import { bmcError, type BmcTarget } from '../../src/adapters/standalone/bmc.ts';
import { metricsRegistry } from '../../src/observability/metrics.ts';

/** Time moves only when the test says so; sleepers wake when their time has come. */
class ManualClock implements GuardClock {
  t = 1_000_000;
  private sleepers: Array<{ at: number; wake: () => void }> = [];
  now = () => this.t;
  sleep = (ms: number) => new Promise<void>((wake) => this.sleepers.push({ at: this.t + ms, wake }));
  get sleeping() {
    return this.sleepers.length;
  }
  /** Let what is running reach its next sleep, then move time on by `ms`. */
  async advance(ms: number) {
    await settle();
    this.t += ms;
    const due = this.sleepers.filter((s) => s.at <= this.t);
    this.sleepers = this.sleepers.filter((s) => s.at > this.t);
    for (const s of due) s.wake();
    await settle();
  }
}

/** Let every promise callback that can run, run. */
const settle = () => new Promise((r) => setImmediate(r));

/** A driver error that carries its class, as the drivers' classified errors do. */
class KindError extends ServiceError {
  constructor(
    readonly kind: string,
    transient = true,
    status?: number,
  ) {
    super(
      'bmc',
      'redfish GET ComputerSystem',
      `${kind}: n0 (BMC http://bmc-a): ${kind === 'unreachable' ? 'ECONNREFUSED' : 'no'}`,
      status,
      transient,
    );
  }
}

const target = (id: string, address = 'http://bmc-a/redfish/v1/Systems/1'): BmcTarget => ({ id, address, username: 'u', password: 'p' });

function make(o: ConstructorParameters<typeof BmcGuard>[0] = {}) {
  const clock = new ManualClock();
  const guard = new BmcGuard({ clock, random: () => 0.5, ...o });
  return { clock, guard };
}

/** A call that counts itself and does what `script` says for its n-th run. */
function scripted(script: (n: number) => Promise<string>) {
  const s = { calls: 0, fn: () => script(s.calls++) };
  return s;
}

const unreachable = () => Promise.reject(new KindError('unreachable'));

describe('BMC circuit', () => {
  it('opens after N failures in a row; then fails at once with the last failure, of its class', async () => {
    const { guard } = make({ failuresToOpen: 3 });
    const s = scripted(unreachable);
    for (let i = 0; i < 3; i++) await expect(guard.run(target('n0'), s.fn)).rejects.toThrow(/unreachable/);
    expect(guard.state('http://bmc-a/x').state).toBe('open');
    const e = await guard.run(target('n1', 'http://bmc-a/redfish/v1/Systems/2'), s.fn).catch((x: unknown) => x);
    expect(s.calls).toBe(3);
    expect(e).toBeInstanceOf(KindError);
    expect(e).toMatchObject({ kind: 'unreachable', transient: true });
    expect((e as Error).message).toMatch(
      /unreachable: n0 .*ECONNREFUSED \(circuit open at BMC bmc-a:80 after 3 failures in a row: no call for 5 s\)/,
    );
  });

  it('does not open on failures that are answers (a refused login), and a success resets the count', async () => {
    const { guard } = make({ failuresToOpen: 2 });
    const login = scripted(() => Promise.reject(new KindError('refused_login', false, 401)));
    for (let i = 0; i < 4; i++) await expect(guard.run(target('n0'), login.fn)).rejects.toThrow(/refused_login/);
    expect(login.calls).toBe(4);
    const flaky = scripted((n) => (n % 2 === 0 ? unreachable() : Promise.resolve('on')));
    for (let i = 0; i < 6; i++) await guard.run(target('n0'), flaky.fn).catch(() => {});
    expect(flaky.calls).toBe(6);
    expect(guard.state('http://bmc-a').state).toBe('closed');
  });

  it('a call that failed here (out of files: local_resources) neither opens the circuit nor closes it', async () => {
    const { guard } = make({ failuresToOpen: 2 });
    const local = () => Promise.reject(bmcError('redfish', 'GET ComputerSystem', target('n0'), 'local_resources', 'EMFILE'));
    await expect(guard.run(target('n0'), unreachable)).rejects.toThrow(/unreachable/);
    for (let i = 0; i < 5; i++) await expect(guard.run(target('n0'), local)).rejects.toThrow(/local_resources/);
    expect(guard.state('http://bmc-a').state).toBe('closed');
    // The failure before them still counts: one more outage opens it.
    await expect(guard.run(target('n0'), unreachable)).rejects.toThrow(/unreachable/);
    expect(guard.state('http://bmc-a').state).toBe('open');
  });

  it('half-open: after the open time one probe goes through, calls during it fail at once; an answer closes it', async () => {
    const { guard, clock } = make({ failuresToOpen: 1, openMs: 5000 });
    await expect(guard.run(target('n0'), unreachable)).rejects.toThrow();
    await clock.advance(4999);
    await expect(guard.run(target('n0'), () => Promise.resolve('on'))).rejects.toThrow(/circuit open/);
    await clock.advance(1);
    let answer!: (v: string) => void;
    const probeCall = scripted(() => new Promise<string>((r) => (answer = r)));
    const probe = guard.run(target('n0'), probeCall.fn);
    await settle();
    expect(guard.state('http://bmc-a').state).toBe('half-open');
    const other = scripted(() => Promise.resolve('off'));
    await expect(guard.run(target('n1'), other.fn)).rejects.toThrow(/half-open at BMC bmc-a:80: a probe is in flight/);
    expect(other.calls).toBe(0);
    answer('on');
    await expect(probe).resolves.toBe('on');
    expect(guard.state('http://bmc-a').state).toBe('closed');
    await expect(guard.run(target('n1'), other.fn)).resolves.toBe('off');
  });

  it('a failed probe opens it again for twice as long, up to the cap', async () => {
    const { guard, clock } = make({ failuresToOpen: 1, openMs: 5000, maxOpenMs: 30_000 });
    const s = scripted(unreachable);
    await guard.run(target('n0'), s.fn).catch(() => {});
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { openUntil } = guard.state('http://bmc-a');
      waits.push(openUntil - clock.now());
      await clock.advance(openUntil - clock.now());
      await guard.run(target('n0'), s.fn).catch(() => {});
    }
    expect(waits).toEqual([5000, 10_000, 20_000, 30_000, 30_000]);
    expect(s.calls).toBe(6);
  });

  it('jitter spreads the open time from 0.75x to 1.25x', async () => {
    for (const [r, ms] of [
      [0, 3750],
      [1, 6250],
    ] as const) {
      const { guard, clock } = make({ failuresToOpen: 1, openMs: 5000, random: () => r });
      await guard.run(target('n0'), unreachable).catch(() => {});
      expect(guard.state('http://bmc-a').openUntil - clock.now()).toBe(ms);
    }
  });
});

describe('429 and 503: backoff', () => {
  it('waits out Retry-After (seconds) before asking again, and the BMC’s other calls wait with it', async () => {
    const { guard, clock } = make();
    const s = scripted((n) => (n === 0 ? Promise.reject(markBusy(new KindError('bmc_error', true, 429), '7')) : Promise.resolve('on')));
    const first = guard.run(target('n0'), s.fn);
    const second = guard.run(target('n1', 'http://bmc-a/redfish/v1/Systems/2'), s.fn);
    await settle();
    expect(s.calls).toBe(1);
    await clock.advance(6999);
    expect(s.calls).toBe(1);
    await clock.advance(1);
    await expect(first).resolves.toBe('on');
    await expect(second).resolves.toBe('on');
    expect(s.calls).toBe(3);
    expect(guard.state('http://bmc-a').state).toBe('closed');
  });

  it('an HTTP-date Retry-After, and none (busyWaitMs, doubling); then the last answer fails the call', async () => {
    const { guard, clock } = make({ busyRetries: 2, busyWaitMs: 1000 });
    const date = new Date(clock.now() + 4000).toUTCString();
    const busy = (h: string | null) => () => Promise.reject(markBusy(new KindError('bmc_error', true, 503), h, clock.now()));
    const d = scripted((n) => (n === 0 ? busy(date)() : Promise.resolve('off')));
    const p = guard.run(target('n0'), d.fn);
    await clock.advance(3999);
    expect(d.calls).toBe(1);
    await clock.advance(1);
    await expect(p).resolves.toBe('off');

    const none = scripted(busy(null));
    const q = guard.run(target('n0'), none.fn).catch((e: unknown) => e);
    await clock.advance(1000);
    expect(none.calls).toBe(2);
    await clock.advance(1999);
    expect(none.calls).toBe(2);
    await clock.advance(1);
    expect(((await q) as Error).message).toMatch(/bmc_error/);
    expect(none.calls).toBe(3);
  });

  it('caps a Retry-After longer than maxBusyWaitMs', async () => {
    const { guard, clock } = make({ maxBusyWaitMs: 2000 });
    const s = scripted((n) => (n === 0 ? Promise.reject(markBusy(new KindError('bmc_error', true, 429), '3600')) : Promise.resolve('on')));
    const p = guard.run(target('n0'), s.fn);
    await clock.advance(2000);
    await expect(p).resolves.toBe('on');
  });
});

describe('limits', () => {
  /** Calls that stay in flight until released; counts how many are in flight at once, overall and per BMC. */
  function held() {
    const h = { now: 0, max: 0, release: [] as Array<() => void> };
    return {
      h,
      fn: () =>
        new Promise<string>((resolve) => {
          h.now++;
          h.max = Math.max(h.max, h.now);
          h.release.push(() => {
            h.now--;
            resolve('on');
          });
        }),
    };
  }

  it('one call in flight per BMC, in arrival order; systems of one Redfish BMC share it', async () => {
    const { guard } = make();
    const { h, fn } = held();
    const order: string[] = [];
    const calls = ['1', '2', '3'].map((n) =>
      guard.run(target(`n${n}`, `http://bmc-a/redfish/v1/Systems/${n}`), fn).then(() => order.push(n)),
    );
    for (let i = 0; i < 3; i++) {
      await settle();
      expect(h.now).toBe(1);
      h.release.shift()!();
    }
    await Promise.all(calls);
    expect(h.max).toBe(1);
    expect(order).toEqual(['1', '2', '3']);
  });

  it('at most `concurrency` calls in flight over every BMC', async () => {
    const { guard } = make({ concurrency: 4 });
    const { h, fn } = held();
    const calls = Array.from({ length: 10 }, (_, i) => guard.run(target(`n${i}`, `10.0.0.${i}:623`), fn));
    await settle();
    expect(h.now).toBe(4);
    while (h.release.length) {
      h.release.shift()!();
      await settle();
      expect(h.now).toBeLessThanOrEqual(4);
    }
    await Promise.all(calls);
    expect(h.max).toBe(4);
  });

  it('a call asked for first takes the next free turn ahead of those waiting; each kind keeps its order', async () => {
    const { guard } = make({ concurrency: 1 });
    const { h, fn } = held();
    const order: string[] = [];
    const run = (n: string, first: boolean) => guard.run(target(`n${n}`, `10.0.1.${n}:623`), fn, { first }).then(() => order.push(n));
    const calls = [run('1', false), run('2', false), run('3', false), run('4', true), run('5', true)];
    while (order.length < 5) {
      await settle();
      expect(h.now).toBe(1);
      h.release.shift()!();
      await settle();
    }
    await Promise.all(calls);
    // 1 had the turn already; then the two asked for first, in their order, then the rest in theirs.
    expect(order).toEqual(['1', '4', '5', '2', '3']);
  });

  it('counts the calls waiting for a turn, their wait and their duration by outcome', async () => {
    const sum = async (name: string, labels: Record<string, string> = {}) => {
      const m = (await metricsRegistry.getSingleMetric(name)!.get()).values;
      const pick = (suffix: string) =>
        m.find(
          (v) =>
            (v as { metricName?: string }).metricName === `${name}${suffix}` && Object.entries(labels).every(([k, x]) => v.labels[k] === x),
        )?.value ?? 0;
      return name.endsWith('_waiting') ? (m[0]?.value ?? 0) : pick('_count');
    };
    const before = {
      ok: await sum('bootorch_bmc_call_duration_seconds', { outcome: 'ok' }),
      error: await sum('bootorch_bmc_call_duration_seconds', { outcome: 'error' }),
      waited: await sum('bootorch_bmc_turn_wait_seconds'),
    };
    const { guard } = make({ concurrency: 2 });
    const { h, fn } = held();
    const calls = Array.from({ length: 5 }, (_, i) => guard.run(target(`n${i}`, `10.0.1.${i}:623`), fn));
    await settle();
    expect(await sum('bootorch_bmc_calls_waiting')).toBe(3);
    while (h.release.length) {
      h.release.shift()!();
      await settle();
    }
    await Promise.all(calls);
    await expect(
      guard.run(target('e', '10.0.2.1:623'), async () => Promise.reject(new KindError('refused_login', false))),
    ).rejects.toThrow();
    expect(await sum('bootorch_bmc_calls_waiting')).toBe(0);
    expect(await sum('bootorch_bmc_call_duration_seconds', { outcome: 'ok' })).toBe(before.ok + 5);
    expect(await sum('bootorch_bmc_call_duration_seconds', { outcome: 'error' })).toBe(before.error + 1);
    expect(await sum('bootorch_bmc_turn_wait_seconds')).toBe(before.waited + 6);
  });

  it('keys BMCs by host and port', () => {
    expect(bmcKey('https://bmc1.example/redfish/v1/Systems/1')).toBe('bmc1.example:443');
    expect(bmcKey('http://127.0.0.1:8001/redfish/v1/Systems/x1')).toBe('127.0.0.1:8001');
    expect(bmcKey('10.1.0.5')).toBe('10.1.0.5:623');
    expect(bmcKey('10.1.0.5:9001')).toBe('10.1.0.5:9001');
    expect(bmcKey('[fe80::1]:623')).toBe('fe80::1:623');
  });
});
