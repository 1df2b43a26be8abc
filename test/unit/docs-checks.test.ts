/**
 * The docs checks CI runs (scripts/check-links.ts, scripts/config-table.ts) catch what they are for:
 * a missing file, a missing anchor, GitHub's slugs for headings with code and duplicates, and each
 * schema key's default and TSDoc read from the source.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { anchorsOf, brokenLinks } from '../../scripts/check-links.ts';
import { defaultOf, documentedKeys, generatedPart } from '../../scripts/config-table.ts';

describe('docs links', () => {
  test('anchors are GitHub slugs: code and punctuation dropped, duplicates numbered, fenced code ignored', () => {
    const a = anchorsOf('# `bootorch sim`, `api` and more\n\n## 3b. The real path: x\n\n## Dup\n\n## Dup\n\n```\n# not a heading\n```\n');
    expect([...a]).toEqual(['bootorch-sim-api-and-more', '3b-the-real-path-x', 'dup', 'dup-1']);
  });

  test('a missing file and a missing anchor are reported with their line; links in code are not links', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bootorch-links-'));
    fs.mkdirSync(path.join(root, 'docs'));
    fs.writeFileSync(path.join(root, 'docs/a.md'), '# A page\n\n## Its part\n');
    fs.writeFileSync(
      path.join(root, 'README.md'),
      [
        '# R',
        '[ok](docs/a.md#its-part) [self](#r) [web](https://example.com/x#y)',
        '[gone](docs/b.md)',
        '[no anchor](docs/a.md#nope)',
        '`[code](docs/c.md)`',
        '```',
        '[fenced](docs/d.md)',
        '```',
      ].join('\n'),
    );
    const { broken, checked } = brokenLinks(['README.md', 'docs/a.md'], root);
    expect(checked).toBe(4);
    expect(broken.map((b) => `${b.line}: ${b.target}`)).toEqual(['3: docs/b.md', '4: docs/a.md#nope']);
  });
});

describe('configuration table', () => {
  test('defaults are read through optional, pipe and transform wrappers', () => {
    expect(defaultOf(z.coerce.number().default(4000))).toBe(4000);
    expect(defaultOf(z.string().optional())).toBeUndefined();
    expect(
      defaultOf(
        z
          .string()
          .default('a,b')
          .transform((s) => s.split(',')),
      ),
    ).toBe('a,b');
  });

  test('every key of the schemas is in the table, with the TSDoc of its source', () => {
    const keys = documentedKeys('src/config.ts', 'envSchema');
    expect(keys.find((k) => k.key === 'PORT')?.doc).toMatch(/^API listen port/);
    expect(keys.find((k) => k.key === 'PCS_URL')?.doc).toBe('');
    const table = generatedPart();
    for (const { key } of [...keys, ...documentedKeys('src/auth/config.ts', 'authEnvSchema')]) expect(table).toContain(`\`${key}\``);
    expect(table).toContain('| `HSM_URL`, `PCS_URL`, `BSS_URL`, `CFS_URL` | – |');
  });
});
