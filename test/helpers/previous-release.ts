/**
 * The previous release's sources (scripts/migrations-policy.json previousRelease, the commit the
 * rolling-upgrade rule is checked against), for tests that run its processes beside this checkout's:
 * `git archive` of that commit into a directory under the system's temporary directory, made once and
 * reused (named by the full commit). Its roles run through tsx from its src/. Its dependencies: this
 * checkout's node_modules (a symlink) when every dependency it declares is declared here with the same
 * range, else its own `npm ci` from its lockfile (once, into the cached directory).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readPolicy } from '../../scripts/check-migrations.ts';
import { ROOT } from './processes.ts';

type Deps = Record<string, string>;
const depsOf = (pkg: { dependencies?: Deps; devDependencies?: Deps }): Deps => ({ ...pkg.devDependencies, ...pkg.dependencies });

export interface PreviousRelease {
  /** The commit (full hash) and the directory its sources are in. */
  commit: string;
  root: string;
  /** 'shared': this checkout's node_modules; 'own': its own npm ci. */
  modules: 'shared' | 'own';
}

export function previousRelease(): PreviousRelease {
  const { previousRelease: ref } = readPolicy();
  const commit = execFileSync('git', ['-C', ROOT, 'rev-parse', '--verify', `${ref}^{commit}`], { encoding: 'utf8' }).trim();
  const root = path.join(os.tmpdir(), `bootorch-release-${commit}`);
  if (!fs.existsSync(path.join(root, '.ready'))) {
    const tmp = `${root}.${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    execFileSync('sh', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'sh', ROOT, commit, tmp], { stdio: 'inherit' });
    const theirs = depsOf(JSON.parse(fs.readFileSync(path.join(tmp, 'package.json'), 'utf8')));
    const ours = depsOf(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')));
    const same = Object.entries(theirs).every(([name, range]) => ours[name] === range);
    if (same) fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tmp, 'node_modules'));
    else execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: tmp, stdio: 'inherit' });
    fs.writeFileSync(path.join(tmp, '.ready'), same ? 'shared\n' : 'own\n');
    // A directory left half made (no .ready) goes; one another run finished meanwhile stays.
    if (!fs.existsSync(path.join(root, '.ready'))) fs.rmSync(root, { recursive: true, force: true });
    try {
      fs.renameSync(tmp, root);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  const modules = fs.readFileSync(path.join(root, '.ready'), 'utf8').trim() === 'shared' ? 'shared' : 'own';
  return { commit, root, modules };
}
