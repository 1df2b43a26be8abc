/**
 * Once per `npm test`: find a PostgreSQL (DATABASE_URL, else an embedded one started here), build a
 * migrated template database, and hand its name to the test files, which clone it (test/helpers/db.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { connect, runMigrations } from '../../src/db/client.ts';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.ts';
import { contractsMissing } from './contracts-dir.ts';
import { freePort } from './ports.ts';

export { freePort };

let embedded: EmbeddedServer | undefined;
let embeddedDir: string | undefined;

export async function setup(project: TestProject) {
  const missing = contractsMissing();
  if (missing) console.warn(`contract tests: not run: ${missing}`);
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    // A server of its own per run (own folder, free port), so two runs on one machine never share one.
    const port = Number(process.env.TEST_EMBEDDED_PG_PORT ?? (await freePort()));
    embeddedDir = path.resolve('.data', `test-${process.pid}`);
    embedded = await startEmbeddedPostgres(embeddedDir, port, undefined, { durability: 'throwaway' }); // deleted after the run
    adminUrl = embedded.url('postgres');
  }
  const template = `bootorch_tpl_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${template} with (force)`);
    await admin.query(`create database ${template}`);
  } finally {
    await admin.end();
  }
  const tplUrl = withDatabase(adminUrl, template);
  const conn = connect(tplUrl, { max: 2 });
  try {
    await runMigrations(conn.db);
  } finally {
    await conn.close();
  }
  project.provide('adminUrl', adminUrl);
  project.provide('template', template);
  return async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(`drop database if exists ${template} with (force)`);
    } finally {
      await c.end();
    }
    if (embedded) {
      await embedded.stop();
      fs.rmSync(embeddedDir!, { recursive: true, force: true });
    }
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    template: string;
  }
}
