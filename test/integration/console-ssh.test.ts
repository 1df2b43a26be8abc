/**
 * Redfish consoles over SSH (src/consoles/ssh.ts, redfish-console.ts, capture.ts) against a farm of
 * five simulated BMCs (src/sim/bmc-farm.ts with `ssh`: an ssh2 server per BMC) and a real database:
 * - a node's console text arrives in console_chunks and through the read path (readConsole), and the
 *   BMC's host key is pinned on the node;
 * - a BMC whose host key changes is refused with host_key_changed and a warn line naming the node and
 *   both fingerprints, and nothing is read from it; re-registering it with another address clears the pin
 *   (and a failed simulated boot then prints its kernel panic);
 * - a first host key is trusted only once it is the stored pin (a session that lost the race is refused);
 * - a wrong password gives auth_refused and waits authRetryMs before trying again, the password in no log line;
 * - a BMC that goes away and comes back is connected again;
 * - a SerialConsole with IPMI and no SSH chooses SOL; with neither, `not offered`, said once at info.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { waitFor } from '../helpers/wait.ts';
import { logLines, type LogLine } from '../helpers/log-lines.ts';
import { SimWorld } from '../../src/sim/world.ts';
import { startBmcFarm, type BmcFarm } from '../../src/sim/bmc-farm.ts';
import { setSimBmcLogin } from '../../src/sim/http/redfish-inventory.ts';
import { setSimSerialConsole } from '../../src/sim/http/redfish.ts';
import { NodeRegistry } from '../../src/adapters/standalone/registry.ts';
import { ConsoleCapture } from '../../src/consoles/capture.ts';
import { SshSession } from '../../src/consoles/ssh.ts';
import { consoleTail, readConsole } from '../../src/consoles/read.ts';
import { listNodes } from '../../src/db/node-inventory.ts';

const PASSWORD = 'calvin-s3cret';
const key = randomBytes(32);
let db: TestDb;
let world: SimWorld;
let farm: BmcFarm;
let capture: ConsoleCapture;
let ids: string[];
let lines: LogLine[];
let A: string;
let B: string;
let WRONG: string;
let IPMI: string;
let NONE: string;

const register = (id: string, i: number, o: { password?: string; address?: string } = {}) =>
  new NodeRegistry(key).register(db.db, [
    {
      xname: id,
      mac: `52:54:00:00:38:${String(i).padStart(2, '0')}`,
      bmc: { driver: 'redfish', address: o.address ?? farm.url(id), username: 'root', password: o.password ?? PASSWORD },
    },
  ]);

const session = (id: string) => capture.sessions().find((s) => s.node === id);
const until = <T>(cond: () => T | undefined | false, what: string, ms = 15_000) =>
  waitFor(
    async () => cond(),
    what,
    ms,
    () => JSON.stringify(capture.sessions()),
    50,
  );
const pinOf = async (id: string) => (await listNodes(db.db, [id]))[0]?.bmcHostKey ?? '';

beforeAll(async () => {
  world = new SimWorld({ nodes: 5, initial: { power: 'off' } });
  ids = world.ids();
  [A, B, WRONG, IPMI, NONE] = ids as [string, string, string, string, string];
  setSimBmcLogin(world, { username: 'root', password: PASSWORD });
  farm = await startBmcFarm(world, { ssh: true });
  setSimSerialConsole(world, IPMI, {
    MaxConcurrentSessions: 1,
    SSH: { ServiceEnabled: false },
    IPMI: { ServiceEnabled: true, Port: 6230 },
  });
  setSimSerialConsole(world, NONE, { MaxConcurrentSessions: 0, SSH: { ServiceEnabled: false }, IPMI: { ServiceEnabled: false } });
  db = await freshDb();
  for (const [i, id] of ids.entries()) expect((await register(id, i, { password: id === WRONG ? 'not-it' : PASSWORD })).ok).toBe(true);
  const log = logLines();
  lines = log.lines;
  capture = new ConsoleCapture(db.db, {
    secretKey: key,
    log: pino({ level: 'info' }, log.sink),
    roundMs: 100,
    // A refused login waits 1.5 s here (15 min by default).
    ssh: { backoffMs: 100, maxBackoffMs: 800, activateTimeoutMs: 5000, authRetryMs: 1500 },
    // SOL is chosen, not run: no ipmitool BMC listens there.
    sol: { binary: 'false', backoffMs: 60_000 },
    redfishOptions: { timeoutMs: 2000 },
  });
  capture.start();
});

afterAll(async () => {
  await capture?.stop();
  await farm?.close();
  world?.close();
  await db?.drop();
});

describe('an SSH console', () => {
  it('stores what the node prints, readable through the read path, and pins the host key', async () => {
    await until(() => session(A)?.state === 'operational', 'A operational');
    world.transition('On', [A]);
    farm.consoles!.write(A, 'console of A: hello\r\n');
    const c = await waitFor(
      async () => {
        const r = await readConsole(db.db, A);
        return r?.text.includes('dracut: Mounted root filesystem') && r.text.includes('console of A: hello') ? r : undefined;
      },
      'A console stored',
      15_000,
    );
    expect(c.text).toContain('Linux version 6.1.0-sim');
    // The node booted: its login prompt. Then explain's and Component.consoleTail's read, the last lines.
    await waitFor(async () => (await readConsole(db.db, A))?.text.includes(`${A} login: `), 'A login prompt', 15_000);
    farm.consoles!.write(A, 'the last line\r\n');
    // The prompt has no newline of its own: the next text ends its line.
    await waitFor(async () => (await consoleTail(db.db, A, 2)).at(-1) === `${A} login: the last line`, 'A tail', 10_000);
    expect(session(A)).toMatchObject({ way: 'ssh', state: 'operational' });
    expect(await pinOf(A)).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
  });

  it('refuses a changed host key by name and reads nothing from it; a new BMC address clears the pin', async () => {
    await until(() => session(B)?.state === 'operational', 'B operational');
    const pinned = await waitFor(async () => (await pinOf(B)) || undefined, 'B pinned', 5000);
    await farm.rekey(B);
    await until(() => session(B)?.lastError.startsWith('host_key_changed'), 'B refused');
    expect(session(B)!.state).not.toBe('operational');
    expect(farm.consoles!.open(B)).toBe(0);
    farm.consoles!.write(B, 'must not be kept\r\n');
    const warn = lines.find((l) => l.level === 40 && l.xname === B && /host key changed/.test(l.msg));
    expect(warn).toMatchObject({ pinned });
    expect(warn!.seen).toMatch(/^SHA256:/);
    expect(warn!.seen).not.toBe(pinned);
    expect((await readConsole(db.db, B))?.text ?? '').not.toContain('must not be kept');
    expect(await pinOf(B)).toBe(pinned);

    // The same BMC under another address (localhost for 127.0.0.1): a re-registration, the pin starts over.
    expect((await register(B, 1, { address: farm.url(B).replace('127.0.0.1', 'localhost') })).ok).toBe(true);
    await until(() => session(B)?.state === 'operational', 'B operational again');
    const repinned = await waitFor(async () => (await pinOf(B)) || undefined, 'B pinned again', 5000);
    expect(repinned).not.toBe(pinned);
    farm.consoles!.write(B, 'after the new pin\r\n');
    await waitFor(async () => (await readConsole(db.db, B))?.text.includes('after the new pin'), 'B text stored', 10_000);

    // A boot that fails in the simulator prints a kernel panic, the line explain shows.
    world.faults.setNodes('bootsButNeverReports', [B]);
    world.transition('On', [B]);
    await waitFor(async () => (await consoleTail(db.db, B, 1))[0]?.includes('Kernel panic - not syncing'), 'B panic stored', 15_000);
  });

  it('trusts a first host key only once it is the stored pin: a session that lost the race to pin is refused', async () => {
    // Another session (or worker) pinned another key between this one's inventory read and its handshake.
    const text: string[] = [];
    let offered = '';
    const late = new SshSession(
      {
        id: A,
        address: farm.url(A),
        username: 'root',
        password: PASSWORD,
        host: '127.0.0.1',
        port: farm.sshPort(A),
        entryCommand: '',
        hostKey: '',
      },
      (t) => text.push(t),
      async (fp) => {
        offered = fp;
        return 'SHA256:pinned-by-someone-else';
      },
      { backoffMs: 60_000, activateTimeoutMs: 5000 },
    );
    try {
      await waitFor(async () => late.lastError.startsWith('host_key_changed') || undefined, 'late session refused', 10_000);
      expect(offered).toMatch(/^SHA256:/);
      expect(late.state).not.toBe('operational');
      expect(text).toEqual([]);
    } finally {
      await late.stop();
    }
  });

  it('names a refused password and tries again with a growing wait, the password in no log line', async () => {
    // The same login opens the BMC's Redfish and its SSH: a wrong one is refused at the SerialConsole read.
    const s = await until(() => {
      const s = session(WRONG);
      return s && s.reconnects >= 3 && s.lastError.includes('refused_login') ? s : undefined;
    }, 'WRONG refused three times');
    expect(s.state).not.toBe('operational');
    // A refused login waits authRetryMs (1.5 s here) whatever the backoff's step: over 3 s, at most 2 more tries.
    await new Promise((r) => setTimeout(r, 3000));
    expect(session(WRONG)!.reconnects - s.reconnects).toBeLessThanOrEqual(2);

    // A login changed at the BMC under an SSH console: refused on its next connection, by name.
    await until(() => session(A)?.state === 'operational', 'A operational');
    setSimBmcLogin(world, { username: 'root', password: 'rotated' });
    await farm.unplug(A);
    await farm.plug(A);
    const a = await until(() => {
      const a = session(A);
      return a?.lastError.startsWith('auth_refused') ? a : undefined;
    }, 'A refused');
    await new Promise((r) => setTimeout(r, 3000));
    expect(session(A)!.reconnects - a.reconnects).toBeLessThanOrEqual(2);
    expect(session(A)!.state).not.toBe('operational');
    setSimBmcLogin(world, { username: 'root', password: PASSWORD });
    await until(() => session(A)?.state === 'operational', 'A operational with the login back');
    for (const l of lines) expect(JSON.stringify(l)).not.toContain(PASSWORD);
    for (const l of lines) expect(JSON.stringify(l)).not.toContain('not-it');
    for (const x of capture.sessions()) expect(x.lastError).not.toMatch(new RegExp(`${PASSWORD}|not-it`));
  });

  it('connects again to a BMC that went away and came back', async () => {
    await until(() => session(A)?.state === 'operational', 'A operational');
    const before = session(A)!.reconnects;
    await farm.unplug(A);
    await until(() => session(A)!.state !== 'operational', 'A lost');
    await farm.plug(A);
    await until(() => session(A)!.state === 'operational' && session(A)!.reconnects > before, 'A back');
    farm.consoles!.write(A, 'after the BMC came back\r\n');
    await waitFor(async () => (await readConsole(db.db, A))?.text.includes('after the BMC came back'), 'A text after plug', 10_000);
  });
});

describe('the way each Redfish node is captured', () => {
  it('chooses SOL when SerialConsole offers IPMI and not SSH, none when it offers neither (said once at info)', async () => {
    await until(() => session(IPMI)?.way === 'sol', 'IPMI node on SOL');
    await until(() => session(NONE)?.state === 'not offered', 'NONE not offered');
    expect(session(NONE)!.way).toBe('none');
    await until(() => lines.find((l) => /offers no serial console/.test(l.msg)), 'said');
    // Several rounds later, still said once.
    await new Promise((r) => setTimeout(r, 500));
    const said = lines.filter((l) => /offers no serial console/.test(l.msg));
    expect(said).toHaveLength(1);
    expect(said[0]!.nodes).toEqual([NONE]);
  });
});
