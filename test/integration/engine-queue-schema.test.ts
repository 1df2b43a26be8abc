/**
 * pg-boss's schema version is checked when the engine starts: bootorch's statements against its job
 * table are written for one version, so a database migrated by another pg-boss is a clear error.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import pino from 'pino';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startBoss, type BossHandle } from '../../src/engine/runtime.ts';
import { BOSS_VERSION, BossSchemaError, checkBossSchema, EXPECTED_BOSS_SCHEMA } from '../../src/engine/queue/schema.ts';

let db: TestDb;
let boss: BossHandle;
beforeAll(async () => {
  db = await freshDb();
  boss = await startBoss(db.url, pino({ level: 'silent' }));
});
afterAll(async () => {
  await boss?.stop();
  await db?.drop();
});

it('the installed pg-boss is the pinned one, and the database holds its schema', async () => {
  expect(BOSS_VERSION).toEqual({ package: '10.4.2', schema: EXPECTED_BOSS_SCHEMA });
  await expect(checkBossSchema(boss.boss.getDb())).resolves.toBeUndefined();
});

it('a schema of another pg-boss version is refused, naming both versions', async () => {
  await db.pool.query('update pgboss.version set version = 25');
  try {
    const e = await checkBossSchema(boss.boss.getDb()).catch((x) => x);
    expect(e).toBeInstanceOf(BossSchemaError);
    expect(e.message).toMatch(/pg-boss schema is version 25, bootorch expects 24 \(pg-boss 10\.4\.2\)/);
  } finally {
    await db.pool.query('update pgboss.version set version = $1', [EXPECTED_BOSS_SCHEMA]);
  }
});
