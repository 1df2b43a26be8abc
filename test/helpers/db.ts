/**
 * A fresh database per test file, cloned from the migrated template (~100 ms). Dropped afterwards
 * unless KEEP_TEST_DB is set, so a failing file's data can be inspected.
 */
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { connect, type Connection } from '../../src/db/client.ts';
import { withDatabase } from './global-setup.ts';

export interface TestDb extends Connection {
  name: string;
  drop(): Promise<void>;
}

export async function freshDb(): Promise<TestDb> {
  // Loaded here, not at the top: the benches import helpers that import this file, outside vitest.
  const { inject } = await import('vitest');
  const adminUrl = inject('adminUrl');
  const template = inject('template');
  const name = `bootorch_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${template}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const conn = connect(url, { max: 10 });
  return {
    ...conn,
    name,
    async drop() {
      await conn.close();
      if (process.env.KEEP_TEST_DB) return;
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}
