/**
 * scripts/check-migrations.ts: which migration statements a previous release's processes would not
 * survive during a rolling upgrade (docs/production.md, "Upgrades and roll-back"), and the allow-list.
 */
import { describe, expect, it } from 'vitest';
import { findings, readPolicy } from '../../scripts/check-migrations.ts';

const flagged = (sql: string, allowed = [] as { migration: string; statement: string; why: string }[]) =>
  findings('0099_test', sql, allowed).map((f) => f.statement);

describe('check-migrations', () => {
  it('lets expansions through: new tables, nullable or defaulted columns, indexes', () => {
    expect(
      flagged(
        [
          'CREATE TABLE "t" ("id" text PRIMARY KEY NOT NULL, "n" integer NOT NULL);',
          'ALTER TABLE "components" ADD COLUMN "x" timestamp with time zone;',
          `ALTER TABLE "components" ADD COLUMN "y" text DEFAULT '' NOT NULL;`,
          'CREATE INDEX "i" ON "components" USING btree ("x");',
          'DROP INDEX "components_phase_idx";',
        ].join('--> statement-breakpoint\n'),
      ),
    ).toEqual([]);
  });

  it('refuses drops, renames, type changes, new required columns and lost defaults', () => {
    const bad = [
      'ALTER TABLE "components" DROP COLUMN "error";',
      'DROP TABLE "sessions";',
      'ALTER TABLE "components" RENAME COLUMN "error" TO "failure";',
      'ALTER TABLE "sessions" RENAME TO "runs";',
      'ALTER TABLE "components" ALTER COLUMN "phase" SET DATA TYPE varchar(20);',
      'ALTER TABLE "components" ALTER COLUMN "error" SET NOT NULL;',
      'ALTER TABLE "components" ADD COLUMN "z" text NOT NULL;',
      'ALTER TABLE "components" ALTER COLUMN "phase" DROP DEFAULT;',
      'ALTER TABLE "components" DROP CONSTRAINT "components_phase_ck";',
    ];
    expect(flagged(bad.join('--> statement-breakpoint\n'))).toEqual(bad);
  });

  it('lets a listed contract step through, for its migration only', () => {
    const sql = 'ALTER TABLE "components" DROP COLUMN "old_field";';
    const step = { migration: '0099_test', statement: 'DROP COLUMN "old_field"', why: 'unused since the previous release' };
    expect(flagged(sql, [step])).toEqual([]);
    expect(flagged(sql, [{ ...step, migration: '0098_other' }])).toEqual([sql]);
  });

  it('reads the policy: the previous release is a commit', () => {
    expect(readPolicy().previousRelease).toMatch(/^[0-9a-f]{7,40}$/);
  });
});
