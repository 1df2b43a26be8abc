/**
 * `npm run docs:links`: every relative link and `#anchor` in README.md, BENCHMARKS.md and docs/**\/*.md
 * must resolve: the file or folder exists, and an anchor names a heading of the target as GitHub
 * slugs it (github-slugger, duplicates numbered as GitHub numbers them) or an explicit `<a id>`.
 * Absolute URLs are not fetched. Links inside code spans and fenced code are not links. Prints each
 * broken link as `file:line: target: why` and exits 1 when there is any (CI runs it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The Markdown files checked: the front door, the benchmarks page and the whole library. */
export function markdownFiles(root = ROOT): string[] {
  const out = ['README.md', 'BENCHMARKS.md'].filter((f) => fs.existsSync(path.join(root, f)));
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.md')) out.push(rel);
    }
  };
  if (fs.existsSync(path.join(root, 'docs'))) walk('docs');
  return out;
}

/** The lines of a document that are prose: fenced code blanked, inline code spans removed. */
function proseLines(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (!fence) fence = m[1]![0]!.repeat(m[1]!.length);
      else if (line.trim().startsWith(fence)) fence = undefined;
      return '';
    }
    return fence ? '' : line.replace(/(`+)[^`]*?\1/g, '');
  });
}

/** The anchors a document offers: its headings as GitHub slugs them, and explicit `<a id|name>`. */
export function anchorsOf(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (!fence) fence = f[1]![0]!.repeat(f[1]!.length);
      else if (line.trim().startsWith(fence)) fence = undefined;
      continue;
    }
    if (fence) continue;
    const h = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) anchors.add(slugger.slug(headingText(h[1]!)));
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(a[1]!);
  }
  return anchors;
}

/** A heading's text as GitHub renders it, before slugging: links become their text, code and emphasis marks go. */
function headingText(md: string): string {
  return md
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\*\*|__|\*/g, '')
    .replace(/<[^>]+>/g, '');
}

export interface Broken {
  file: string;
  line: number;
  target: string;
  why: string;
}

/** Every broken relative link of `files` (paths relative to `root`). */
export function brokenLinks(files: string[], root = ROOT): { broken: Broken[]; checked: number } {
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(fs.readFileSync(file, 'utf8')));
    return anchorCache.get(file)!;
  };
  const broken: Broken[] = [];
  let checked = 0;
  for (const file of files) {
    const abs = path.join(root, file);
    proseLines(fs.readFileSync(abs, 'utf8')).forEach((line, i) => {
      const targets = [
        ...[...line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
        ...[...line.matchAll(/^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g)].map((m) => m[1]!),
      ];
      for (const target of targets) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        checked++;
        const [rawPath, anchor] = target.split('#', 2) as [string, string | undefined];
        const to = rawPath ? path.resolve(path.dirname(abs), decodeURIComponent(rawPath)) : abs;
        const report = (why: string) => broken.push({ file, line: i + 1, target, why });
        if (!fs.existsSync(to)) {
          report(`${path.relative(root, to)} does not exist`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!to.endsWith('.md') || fs.statSync(to).isDirectory()) {
          report('an anchor into something that is not a Markdown file');
          continue;
        }
        if (!anchors(to).has(decodeURIComponent(anchor))) report(`no heading in ${path.relative(root, to)} has the anchor #${anchor}`);
      }
    });
  }
  return { broken, checked };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const files = markdownFiles();
  const { broken, checked } = brokenLinks(files);
  for (const b of broken) process.stderr.write(`${b.file}:${b.line}: ${b.target}: ${b.why}\n`);
  if (broken.length) {
    process.stderr.write(`!! ${broken.length} broken link(s) in the docs (of ${checked} relative links in ${files.length} files)\n`);
    process.exit(1);
  }
  process.stdout.write(`docs links: ${checked} relative links in ${files.length} files, all resolve\n`);
}
