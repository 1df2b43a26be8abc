/**
 * `npx tsx scripts/check-migrations.ts`: the rolling-upgrade rule for migrations (docs/production.md,
 * "Upgrades and roll-back"). During an upgrade the previous release's api and worker run against the
 * new schema, so a migration added since that release (scripts/migrations-policy.json previousRelease, a
 * commit; BOOTORCH_PREVIOUS_RELEASE overrides it) may only expand: add tables, nullable or defaulted
 * columns, indexes. A statement that takes away or changes what the previous release reads or writes is
 * refused unless listed in contractSteps ({ migration, statement, why }: a contract step, shipped one
 * release after the code stopped using what it removes):
 *   DROP TABLE / COLUMN / SCHEMA / TYPE / VIEW, any RENAME, ALTER COLUMN ... TYPE, SET NOT NULL,
 *   ADD COLUMN ... NOT NULL without a DEFAULT, DROP DEFAULT, DROP CONSTRAINT.
 * Released migrations are never edited: each migration file of the previous release must be unchanged.
 * Exits 1 naming each statement and what to do; needs the repository's history (a clone of main).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface ContractStep {
  migration: string;
  statement: string;
  why: string;
}

interface MigrationsPolicy {
  previousRelease: string;
  contractSteps: ContractStep[];
}

const policyFile = path.join(root, 'scripts/migrations-policy.json');

export function readPolicy(): MigrationsPolicy {
  const p = JSON.parse(fs.readFileSync(policyFile, 'utf8')) as MigrationsPolicy;
  if (typeof p.previousRelease !== 'string' || !p.previousRelease) throw new Error(`${policyFile}: previousRelease (a commit) is required`);
  for (const [i, s] of (p.contractSteps ?? []).entries())
    for (const k of ['migration', 'statement', 'why'] as const)
      if (typeof s[k] !== 'string' || !s[k]) throw new Error(`${policyFile}: contractSteps[${i}].${k} is required`);
  return { previousRelease: process.env.BOOTORCH_PREVIOUS_RELEASE || p.previousRelease, contractSteps: p.contractSteps ?? [] };
}

/** What is not forward-compatible with the previous release's processes, by pattern (upper-cased SQL). */
const NOT_EXPAND: { re: RegExp; what: string }[] = [
  {
    re: /\bDROP\s+(TABLE|COLUMN|SCHEMA|TYPE|VIEW|MATERIALIZED\s+VIEW|SEQUENCE|FUNCTION)\b/,
    what: 'drops what the previous release may use',
  },
  { re: /\bRENAME\b/, what: 'renames what the previous release names' },
  { re: /\bALTER\s+COLUMN\s+"?\w+"?\s+(SET\s+DATA\s+)?TYPE\b/, what: "changes a column's type under the previous release" },
  { re: /\bSET\s+NOT\s+NULL\b/, what: 'makes a column required that the previous release may not write' },
  { re: /\bDROP\s+DEFAULT\b/, what: "removes a default the previous release's inserts may rely on" },
  { re: /\bDROP\s+CONSTRAINT\b/, what: 'drops a constraint (review: the previous release may rely on it)' },
];
const ADD_REQUIRED = /\bADD\s+COLUMN\b(?![^;]*\bDEFAULT\b)[^;]*\bNOT\s+NULL\b/;

interface Finding {
  migration: string;
  statement: string;
  problem: string;
}

const journalTags = (text: string) => (JSON.parse(text) as { entries: { tag: string }[] }).entries.map((e) => e.tag);

/** The statements of one migration file (drizzle's breakpoints), trimmed. */
const statements = (sql: string) =>
  sql
    .split('--> statement-breakpoint')
    .map((s) => s.trim())
    .filter(Boolean);

/** Every statement of `migration` that is not an expansion and is not an allowed contract step. */
export function findings(migration: string, sql: string, allowed: ContractStep[]): Finding[] {
  const out: Finding[] = [];
  for (const statement of statements(sql)) {
    const upper = statement.toUpperCase();
    const problems = NOT_EXPAND.filter((c) => c.re.test(upper)).map((c) => c.what);
    if (ADD_REQUIRED.test(upper)) problems.push('adds a NOT NULL column without a DEFAULT: the previous release inserts rows without it');
    if (problems.length === 0) continue;
    if (allowed.some((a) => a.migration === migration && statement.includes(a.statement))) continue;
    out.push({ migration, statement, problem: problems.join('; ') });
  }
  return out;
}

function git(args: string[]): string {
  return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function main(): void {
  const policy = readPolicy();
  let previous: string[];
  try {
    previous = journalTags(git(['show', `${policy.previousRelease}:drizzle/meta/_journal.json`]));
  } catch (e) {
    process.stderr.write(
      `check-migrations: the previous release ${policy.previousRelease} (scripts/migrations-policy.json) is not in this clone's history: ${(e as Error).message}\n`,
    );
    process.exit(2);
  }
  const current = journalTags(fs.readFileSync(path.join(root, 'drizzle/meta/_journal.json'), 'utf8'));
  const problems: string[] = [];
  for (const tag of previous) {
    if (!current.includes(tag)) {
      problems.push(`${tag}: released in ${policy.previousRelease}, missing now (a released migration is never removed)`);
      continue;
    }
    const before = git(['show', `${policy.previousRelease}:drizzle/${tag}.sql`]);
    if (before !== fs.readFileSync(path.join(root, `drizzle/${tag}.sql`), 'utf8'))
      problems.push(`${tag}: edited since ${policy.previousRelease} (a released migration is never edited: add a new one)`);
  }
  const added = current.filter((t) => !previous.includes(t));
  for (const tag of added)
    for (const f of findings(tag, fs.readFileSync(path.join(root, `drizzle/${tag}.sql`), 'utf8'), policy.contractSteps))
      problems.push(`${f.migration}: ${f.problem}:\n    ${f.statement.replace(/\s+/g, ' ').slice(0, 200)}`);
  if (problems.length > 0) {
    process.stderr.write(
      `!! migrations since ${policy.previousRelease} that the previous release's processes would not survive during a rolling upgrade:\n` +
        `${problems.map((p) => `  ${p}`).join('\n')}\n` +
        'Expand now (add, keep the old), contract one release later; a contract step goes in scripts/migrations-policy.json contractSteps with why (docs/production.md, "Upgrades and roll-back").\n',
    );
    process.exit(1);
  }
  process.stdout.write(
    `migrations: ${added.length} since ${policy.previousRelease} (${added.join(', ') || 'none'}), all expand-only; ${previous.length} released ones unchanged\n`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
