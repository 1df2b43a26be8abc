/**
 * Secrets are write-only, tried as a reader would against the real API over HTTP: an admin writes a
 * template whose config-drive user data holds a marker secret (GraphQL and the BOS REST door); an
 * admin and a viewer then read everything that shows a template, a plan, a component or its events
 * (every field of those GraphQL types, the REST answers), and the marker is nowhere: not in an
 * answer, not in any table of the database, not in the API's log. The set flag and the length are.
 * A BMC password registered beside it is held to the same rule.
 * Writes that leave the user data out (PATCH, and a client sending back what it read: GET, edit,
 * PUT) keep it, and the config drive built for the node still holds it; a server without the key
 * refuses to store it, naming the field, and a drive whose key is wrong or missing fails saying so.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { GraphQLNamedType, GraphQLSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, errorOf, type GqlResult, type Harness } from '../integration/api-harness.ts';
import { bosClient, type BosClient } from '../rest/bos-client.ts';
import { buildSchema } from '../../src/api/schema.ts';
import { gql } from '../../src/api/edge-support.ts';
import { startApiServer } from '../../src/api/server.ts';
import { createSimAdapters } from '../../src/adapters/factory.ts';
import { SimWorld } from '../../src/sim/world.ts';
import { buildConfigDrive } from '../../src/adapters/standalone/config-drive.ts';
import { openUserData, SecretKeyError } from '../../src/adapters/standalone/secrets.ts';
import { deployOf, setDeploys } from '../../src/db/deploys.ts';
import { NodeRegistry } from '../../src/adapters/standalone/registry.ts';
import type { DeployRecord } from '../../src/domain/deploy.ts';
import { templateInput } from '../../src/cli/templates.ts';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startRole, type RoleProcess } from '../helpers/processes.ts';
import { devAdminHeaders, devAuthEnv } from '../helpers/auth.ts';

const KEY = randomBytes(32);
const MARKER = `bto-secret-${randomBytes(12).toString('hex')}`;
/** A BMC password, the other secret the API takes (sealed the same way): checked beside the user data. */
const BMC_PASSWORD = `bmc-${randomBytes(12).toString('hex')}`;
const USER_DATA = `#cloud-config\nwrite_files:\n  - path: /etc/bootorch/token\n    content: ${MARKER}\n`;
const SUM = `sha256:${'a'.repeat(64)}`;

let h: Harness;
let world: SimWorld;
let node: string;
let admin: BosClient;
let viewer: BosClient;
let viewerHeaders: Record<string, string>;
const logLines: string[] = [];

const bootSet = (configDrive: Record<string, unknown>) => ({
  name: 'compute',
  path: world.defaultImage.manifest,
  type: 's3',
  nodeList: [node],
  deploy: { image: { url: 'http://images.example/rocky.img', checksum: SUM }, configDrive },
});
const PUT = `mutation($n: String!, $i: SessionTemplateInput!) { putSessionTemplate(name: $n, input: $i) { template { name } } }`;
const PATCH = `mutation($n: String!, $p: SessionTemplatePatchInput!) { patchSessionTemplate(name: $n, patch: $p) { template { name } } }`;
const CONFIG_DRIVE = `query($n: String!) { sessionTemplate(name: $n) { bootSets { deploy { configDrive { hasUserData userDataBytes metaData } } } } }`;

/** The stored config drive of a template's boot set `compute`, as the database holds it. */
async function storedDrive(name: string): Promise<NonNullable<DeployRecord['config_drive']>> {
  const r = await h.db.pool.query(`select boot_sets from session_templates where name = $1`, [name]);
  return r.rows[0].boot_sets.compute.deploy.config_drive;
}
const driveOf = async (name: string) => (await h.ok(CONFIG_DRIVE, { n: name })).sessionTemplate.bootSets[0].deploy.configDrive;

/**
 * A selection of every field of a type (fields without required arguments), to the given depth:
 * whatever a reader can ask for, it is asked for.
 */
function everyField(schema: GraphQLSchema, type: GraphQLNamedType, depth: number): string {
  // The schema is built by graphql's CommonJS copy (see src/api/edge-support.ts): its predicates, not the ESM ones.
  const { getNamedType, isAbstractType, isObjectType, isRequiredArgument } = gql;
  if (isAbstractType(type))
    return `{ __typename ${schema
      .getPossibleTypes(type)
      .map((t) => `... on ${t.name} ${everyField(schema, t, depth)}`)
      .join(' ')} }`;
  if (!isObjectType(type)) return '';
  const parts = Object.values(type.getFields()).flatMap((f) => {
    if (f.args.some(isRequiredArgument)) return [];
    const named = getNamedType(f.type);
    if (!isObjectType(named) && !isAbstractType(named)) return [f.name];
    return depth > 1 ? [`${f.name} ${everyField(schema, named, depth - 1)}`] : [];
  });
  return `{ __typename ${parts.join(' ')} }`;
}

/** Every answer a reader gets about the template, its plan, the node and its events, as text. */
async function everythingReadable(headers: Record<string, string>, bos: BosClient): Promise<string> {
  const schema = buildSchema();
  const q = schema.getQueryType()!.getFields();
  const sel = (field: string) => everyField(schema, gql.getNamedType(q[field]!.type), 6);
  const answers: unknown[] = [
    await h.gql(`{ sessionTemplates ${sel('sessionTemplates')} }`, {}, headers),
    await h.gql(`query($n: String!) { sessionTemplate(name: $n) ${sel('sessionTemplate')} }`, { n: 'secret' }, headers),
    await h.gql(`query($n: String!) { validateSessionTemplate(name: $n) ${sel('validateSessionTemplate')} }`, { n: 'secret' }, headers),
    await h.gql(
      `query($i: CreateSessionInput!) { planSession(input: $i) ${sel('planSession')} }`,
      { i: { operation: 'BOOT', templateName: 'secret' } },
      headers,
    ),
    await h.gql(`query($id: ID!) { explain(componentId: $id) ${sel('explain')} }`, { id: node }, headers),
    await h.gql(`query($id: ID!) { componentTimeline(componentId: $id) ${sel('componentTimeline')} }`, { id: node }, headers),
    await h.gql(`{ nodes ${sel('nodes')} }`, {}, headers),
    // Asking for the user data by its old name is not an answer either.
    await h.gql(`{ sessionTemplates { bootSets { deploy { configDrive { userData } } } } }`, {}, headers),
  ];
  const rest = [];
  for (const path of ['/v2/sessiontemplates', '/v2/sessiontemplates/secret', '/v2/sessiontemplatesvalid/secret']) {
    rest.push(await bos.req('GET', path, { check: false }));
  }
  const text = JSON.stringify([answers, rest.map((r) => r.body)]);
  expect(text).not.toContain(MARKER);
  expect(text).not.toContain(BMC_PASSWORD);
  expect(text).not.toContain('v1:'); // nor the sealed value
  // Each was answered (a refusal would hide nothing); the old name is not a field any more.
  const old = answers.pop() as GqlResult;
  for (const r of answers as GqlResult[]) expect(r.errors, JSON.stringify(r).slice(0, 500)).toBeUndefined();
  for (const r of rest) expect(r.status).toBe(200);
  expect(errorOf(old).code).toBe('GRAPHQL_VALIDATION_FAILED');
  return text;
}

/** The tables (schema.table) holding the text anywhere in a row. */
async function tablesHolding(text: string): Promise<string[]> {
  const tables = await h.db.pool.query(
    `select table_schema s, table_name t from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
  );
  const found: string[] = [];
  for (const { s, t } of tables.rows) {
    const r = await h.db.pool.query(`select count(*)::int n from "${s}"."${t}" x where x::text like $1`, [`%${text}%`]);
    if (r.rows[0].n > 0) found.push(`${s}.${t}`);
  }
  return found;
}

beforeAll(async () => {
  world = new SimWorld({ nodes: 4 });
  node = world.ids()[0]!;
  const adapters = createSimAdapters(world);
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  h = await startHarness({
    secretKey: KEY,
    nodeRegistry: new NodeRegistry(KEY),
    adapters,
    images: adapters.images,
    logger: pino({ level: 'trace' }, sink),
  });
  await h.db.pool.query(`insert into components (id, last_action, last_action_at) select unnest($1::text[]), 'newly_discovered', now()`, [
    world.ids(),
  ]);
  viewerHeaders = h.auth.bearer(await h.auth.token('viewer'));
  admin = bosClient(h.server.baseUrl, h.auth.bearer(h.auth.adminToken));
  viewer = bosClient(h.server.baseUrl, viewerHeaders);
});
afterAll(async () => {
  await h?.close();
  world?.close();
});

describe('config-drive user data is write-only', () => {
  it('is sealed in the database and shown to no reader (GraphQL, REST, plan, explain, events, log): a flag and a length instead', async () => {
    await h.ok(PUT, { n: 'secret', i: { bootSets: [bootSet({ userData: USER_DATA, metaData: 'instance-id: i-1\n' })] } });
    await h.ok(`mutation { createSession(input: { operation: BOOT, templateName: "secret" }) { session { name } } }`);
    await h.ok(
      `mutation($p: String!) { registerNodes(nodes: [{ xname: "x3000c0s9b0n0", mac: "52:54:00:00:09:01",
      bmc: { driver: IPMI, address: "10.0.0.9", username: "admin", password: $p } }]) { xname } }`,
      { p: BMC_PASSWORD },
    );
    for (const [who, headers, bos] of [
      ['admin', h.auth.bearer(h.auth.adminToken), admin],
      ['viewer', viewerHeaders, viewer],
    ] as const) {
      const seen = await everythingReadable(headers, bos);
      expect(seen, who).toContain('"hasUserData":true');
      expect(seen, who).toContain('"has_user_data":true');
      expect(seen, who).toContain('"hasPassword":true');
    }
    const stored = await storedDrive('secret');
    expect(stored.user_data).toBeUndefined();
    expect(stored.user_data_sealed).toMatch(/^v1:/);
    expect(await driveOf('secret')).toEqual({
      hasUserData: true,
      userDataBytes: Buffer.byteLength(USER_DATA),
      metaData: 'instance-id: i-1\n',
    });
    // Session setup copies the boot set's deploy to the node: the copy is sealed too.
    const row = await h.db.pool.query(`select boot_sets from session_templates where name = 'secret'`);
    await setDeploys(h.db.db, { name: 's1', tenantKey: '' }, [{ id: node, deploy: row.rows[0].boot_sets.compute.deploy }]);
    expect((await deployOf(h.db.db, node))!.spec.config_drive!.user_data_sealed).toMatch(/^v1:/);
    expect(await everythingReadable(viewerHeaders, viewer)).toContain('"hasUserData":true');
    expect(await tablesHolding(MARKER)).toEqual([]);
    expect(await tablesHolding(BMC_PASSWORD)).toEqual([]);
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('')).not.toContain(MARKER);
    expect(logLines.join('')).not.toContain(BMC_PASSWORD);
  });

  it('is kept by writes that leave it out (PATCH; GET, edit, PUT as the cray CLI and bootorch template do)', async () => {
    await h.ok(PUT, { n: 'keep', i: { bootSets: [bootSet({ userData: USER_DATA })] } });
    const first = (await storedDrive('keep')).user_data_sealed;
    // PATCH of another field; PATCH of the deploy whose config drive names only meta data.
    await h.ok(PATCH, { n: 'keep', p: { description: 'edited' } });
    await h.ok(PATCH, { n: 'keep', p: { bootSets: [bootSet({ metaData: 'instance-id: i-2\n' })] } });
    expect(await driveOf('keep')).toMatchObject({ hasUserData: true, metaData: 'instance-id: i-2\n' });
    // The REST door: what GET answered, edited, sent back with PUT and with PATCH.
    const got = await admin.req('GET', '/v2/sessiontemplates/keep', { check: false });
    expect(got.body.boot_sets.compute.deploy.config_drive).toEqual({
      has_user_data: true,
      user_data_bytes: Buffer.byteLength(USER_DATA),
      meta_data: 'instance-id: i-2\n',
    });
    const edited = { ...got.body, description: 'edited again' };
    expect((await admin.req('PUT', '/v2/sessiontemplates/keep', { body: edited, check: false })).status).toBe(200);
    expect((await admin.req('PATCH', '/v2/sessiontemplates/keep', { body: { boot_sets: got.body.boot_sets }, check: false })).status).toBe(
      200,
    );
    // bootorch template get, then apply of the same file.
    const cli = (
      await h.ok(
        `{ sessionTemplate(name: "keep") { name description bootSets { name path type nodeList deploy { image { url format checksum } configDrive { hasUserData userDataBytes metaData } } } } }`,
      )
    ).sessionTemplate;
    const again = templateInput(cli, undefined, (m) => {
      throw new Error(m);
    });
    await h.ok(PUT, { n: again.name, i: again.input });

    const stored = await storedDrive('keep');
    expect(stored.user_data).toBeUndefined();
    expect(stored.user_data_sealed).toBe(first);
    const drive = await buildConfigDrive(stored, node, KEY);
    expect(drive.includes(Buffer.from(USER_DATA))).toBe(true);

    // Given again it replaces; given as "" it is gone.
    await h.ok(PATCH, { n: 'keep', p: { bootSets: [bootSet({ userData: '#cloud-config\n' })] } });
    expect(await driveOf('keep')).toMatchObject({ hasUserData: true, userDataBytes: 14 });
    await h.ok(PATCH, { n: 'keep', p: { bootSets: [bootSet({ userData: '' })] } });
    expect(await driveOf('keep')).toMatchObject({ hasUserData: false, userDataBytes: 0 });
    expect(await storedDrive('keep')).toEqual({ meta_data: '' });
  });

  it('cannot be stored without a key (refused naming the field), and a drive whose key is missing or wrong says so', async () => {
    await h.ok(PUT, { n: 'nokey', i: { bootSets: [bootSet({ userData: USER_DATA })] } });
    const before = (await storedDrive('nokey')).user_data_sealed;
    const keyless = await startApiServer({ db: h.db.db, scheduler: h.scheduler, port: 0, host: '127.0.0.1', auth: h.auth.auth });
    try {
      const post = async (query: string, variables: Record<string, unknown>) =>
        (
          await fetch(keyless.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...h.auth.bearer(h.auth.adminToken) },
            body: JSON.stringify({ query, variables }),
          })
        ).json();
      const refused = await post(PUT, { n: 'nokey', i: { bootSets: [bootSet({ userData: USER_DATA })] } });
      expect(errorOf({ status: 200, ...refused })).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'bootSets.compute.deploy.configDrive.userData',
        message: expect.stringContaining('BOOTORCH_SECRET_KEY'),
      });
      expect(JSON.stringify(refused)).not.toContain(MARKER);
      // A write that leaves the user data out needs no key: the sealed value is kept as it is.
      const kept = await post(PATCH, { n: 'nokey', p: { description: 'no key needed' } });
      expect(kept.errors).toBeUndefined();
      expect((await storedDrive('nokey')).user_data_sealed).toBe(before);
    } finally {
      await keyless.close();
    }
    const stored = await storedDrive('nokey');
    await expect(buildConfigDrive(stored, node, randomBytes(32))).rejects.toThrow(SecretKeyError);
    await expect(buildConfigDrive(stored, node, randomBytes(32))).rejects.toThrow(
      "the config drive's stored user data does not open with BOOTORCH_SECRET_KEY",
    );
    await expect(buildConfigDrive(stored, node, undefined)).rejects.toThrow(/BOOTORCH_SECRET_KEY is not set/);
  });
});

describe('bootorch api, as a process, with BOOTORCH_SECRET_KEY from its environment', () => {
  let db: TestDb;
  let api: RoleProcess;
  let base = '';
  beforeAll(async () => {
    db = await freshDb();
    api = startRole('api', { ...devAuthEnv(), DATABASE_URL: db.url, PORT: '0', BOOTORCH_SECRET_KEY: KEY.toString('base64') });
    base = (await api.waitFor(/BOS v2 REST: (http:\/\/\S+)\/apis\/bos\/v2/))[1]!;
  }, 120_000);
  afterAll(async () => {
    await api?.stop();
    await db?.drop();
  });

  it('seals what the REST door is given with that key and answers only the flag', async () => {
    const bos = bosClient(base, devAdminHeaders());
    const template = {
      boot_sets: {
        compute: {
          path: 's3://boot-images/x/manifest.json',
          type: 's3',
          node_list: ['x3000c0s1b0n0'],
          deploy: { image: { url: 'http://images.example/rocky.img', checksum: SUM }, config_drive: { user_data: USER_DATA } },
        },
      },
    };
    const put = await bos.req('PUT', '/v2/sessiontemplates/proc', { body: template, check: false });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(JSON.stringify(put.body)).not.toContain(MARKER);
    expect(put.body.boot_sets.compute.deploy.config_drive).toEqual({
      has_user_data: true,
      user_data_bytes: Buffer.byteLength(USER_DATA),
      meta_data: '',
    });
    const row = await db.pool.query(`select boot_sets from session_templates where name = 'proc'`);
    const sealed = row.rows[0].boot_sets.compute.deploy.config_drive.user_data_sealed;
    expect(JSON.stringify(row.rows)).not.toContain(MARKER);
    expect(openUserData(KEY, sealed)).toBe(USER_DATA);
  });
});
