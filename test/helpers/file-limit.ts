/**
 * A test fixture (test/fixtures/*.ts, through tsx) run as its own process under a low open-file limit
 * (`ulimit -n`), for what bootorch does when it runs out of files: the limit applies to that process
 * alone, never to the test runner.
 */
import { spawn } from 'node:child_process';

export async function underFileLimit(
  limit: number,
  fixture: string,
  o: { args?: string[]; stdin?: string } = {},
): Promise<{ code: number | null; out: string; err: string }> {
  const p = spawn('bash', ['-c', `ulimit -n ${limit} && exec "$@"`, '_', process.execPath, '--import', 'tsx', fixture, ...(o.args ?? [])]);
  let out = '';
  let err = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  p.stderr.on('data', (d: Buffer) => (err += d.toString()));
  p.stdin.end(o.stdin ?? '');
  const code = await new Promise<number | null>((resolve) => p.on('close', resolve));
  return { code, out, err };
}
