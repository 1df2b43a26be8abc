/**
 * pg-boss's own schema, as bootorch relies on it. The engine's statements against pg-boss's job table
 * (fetching action jobs in start_after order, deleting completed ones, capping a retry's backoff, the
 * lease reaper's and explain's reads) are written for the job table of one pg-boss schema version; a
 * pg-boss of another version would change it under them. So the package is pinned to an exact version
 * and, once pg-boss has started (and migrated its schema), the schema version is checked here, with a
 * clear error instead of statements failing later.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type PgBoss from 'pg-boss';

/** The schema pg-boss keeps its tables in (bootorch starts it with the default). */
export const BOSS_SCHEMA = 'pgboss';

const require = createRequire(import.meta.url);
const bossDir = path.dirname(require.resolve('pg-boss/package.json'));

/** pg-boss's package version and the schema version it creates and expects. */
export const BOSS_VERSION: { package: string; schema: number } = {
  package: (JSON.parse(readFileSync(path.join(bossDir, 'package.json'), 'utf8')) as { version: string }).version,
  schema: (JSON.parse(readFileSync(path.join(bossDir, 'version.json'), 'utf8')) as { schema: number }).schema,
};

/** The schema version bootorch's statements are written for (pg-boss 10.4.2). */
export const EXPECTED_BOSS_SCHEMA = 24;

export class BossSchemaError extends Error {}

/** Throws BossSchemaError unless the database's pg-boss schema is the one bootorch's statements are written for. */
export async function checkBossSchema(db: PgBoss.Db): Promise<void> {
  if (BOSS_VERSION.schema !== EXPECTED_BOSS_SCHEMA)
    throw new BossSchemaError(
      `pg-boss ${BOSS_VERSION.package} is installed (schema ${BOSS_VERSION.schema}); bootorch's queue statements are written for schema ${EXPECTED_BOSS_SCHEMA} (pg-boss 10.4.2): install the version package.json pins (npm ci)`,
    );
  const r = (await db.executeSql(`select version from ${BOSS_SCHEMA}.version`, [])) as { rows: Array<{ version: number }> };
  const found = r.rows[0]?.version;
  if (found !== EXPECTED_BOSS_SCHEMA)
    throw new BossSchemaError(
      `the database's pg-boss schema is version ${found ?? 'none'}, bootorch expects ${EXPECTED_BOSS_SCHEMA} (pg-boss ${BOSS_VERSION.package}): was it migrated by another pg-boss? Start the bootorch release that matches it, or restore the database`,
    );
}
