/**
 * docker-compose.yml, read as Compose reads it (no container engine with compose runs on these
 * machines; docs/production.md, "Compose"): every bootorch service runs the image the Containerfile
 * builds (build: context . and the Containerfile, one image name), mounts no source (named volumes
 * only), runs a role the CLI has, and its environment is one bootorch's configuration accepts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.ts';
import { ROOT } from '../helpers/processes.ts';

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  read_only?: boolean;
}

const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const bootorch = Object.entries(compose.services).filter(([name]) => name !== 'postgres');
const ROLES = ['api', 'worker', 'sim', 'migrate'];

describe('docker-compose.yml', () => {
  it('runs every bootorch service from the image the Containerfile builds, read-only', () => {
    expect(bootorch.map(([n]) => n).sort()).toEqual(['api', 'migrate', 'sim', 'worker']);
    const images = new Set(bootorch.map(([, s]) => s.image));
    expect(images.size).toBe(1);
    for (const [name, s] of bootorch) {
      expect(s.build, name).toEqual({ context: '.', dockerfile: 'Containerfile' });
      expect(s.read_only, name).toBe(true);
      expect(ROLES, name).toContain(s.command?.[0]);
    }
    expect(fs.existsSync(path.join(ROOT, 'Containerfile'))).toBe(true);
  });

  it('mounts no source: named volumes only, each declared', () => {
    for (const [name, s] of Object.entries(compose.services))
      for (const v of s.volumes ?? []) {
        const source = v.split(':')[0]!;
        expect(source, `${name}: ${v}`).toMatch(/^[a-z][\w-]*$/);
        expect(Object.keys(compose.volumes ?? {}), `${name}: ${v}`).toContain(source);
      }
  });

  it("gives each service an environment bootorch's configuration accepts", () => {
    for (const [name, s] of bootorch) {
      const env = Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)]));
      expect(() => loadConfig(env), name).not.toThrow();
    }
  });
});
