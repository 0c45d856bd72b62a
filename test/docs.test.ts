// The documentation's own checks (issue 58): every relative link in README.md, docs/ and bench/
// resolves, #anchors included (GitHub's heading slugs); every page of docs/ can be reached from its
// index; and the configuration page's table names exactly the variables src/config/env.ts reads, so a
// new variable cannot ship undocumented and a removed one cannot stay documented.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Repository-relative paths of the files under `dir` (recursively) whose names end in `ext`. */
function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(ext))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

const DOCS = ['README.md', ...filesUnder('docs', '.md'), ...filesUnder('bench', '.md')].sort();

/** The text as a forge renders it into prose: fenced code blocks and inline code spans removed. */
function prose(markdown: string): string {
  return markdown.replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '').replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, '');
}

/** Link targets: inline links and images, reference definitions, and HTML href/src attributes. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const defined = [...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!);
  const html = [...text.matchAll(/<(?:a|img)\s[^>]*?(?:href|src)="([^"]*)"/g)].map((m) => m[1]!);
  return [...inline, ...defined, ...html];
}

/** GitHub's anchor for a heading: its text lower-cased, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link shows its text
    .replace(/[`*]/g, ''); // code and emphasis marks are not text
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

/** Every anchor a file offers: its headings' slugs (repeats get -1, -2 …) and HTML ids and names. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown.replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '');
  for (const [, heading] of text.matchAll(/^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/gm)) {
    const base = slug(heading!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const [, id] of text.matchAll(/<a\s[^>]*?(?:id|name)="([^"]+)"/g)) anchors.add(id!);
  return anchors;
}

/** What is wrong with one link of `file`, or null when it resolves. */
function brokenLink(file: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return null; // not relative
  const [filePart = '', anchor] = target.split('#', 2);
  const resolved = filePart === '' ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), decodeURIComponent(filePart));
  if (!resolved.startsWith(ROOT + path.sep)) return `${target}: leaves the repository`;
  if (!existsSync(resolved)) return `${target}: no such file`;
  if (anchor === undefined || !resolved.endsWith('.md')) return null;
  return anchorsOf(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor)) ? null : `${target}: no heading with that anchor`;
}

/** Backticked upper-case names in the first cell of each table row of `markdown`. */
function variablesInFirstColumn(markdown: string): string[] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('| ') && !/^\|[-| ]+\|$/.test(line))
    .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*[A-Z0-9])`/g)].map((m) => m[1]!));
}

describe('the documentation', () => {
  it('finds the pages it checks', () => {
    expect(DOCS).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/configuration.md', 'bench/README.md']));
  });

  it('keeps README.md a front door of under 200 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThan(200);
  });

  it('has no broken relative link in README.md, docs/ or bench/ (files and #anchors)', () => {
    const broken = DOCS.flatMap((file) => linkTargets(read(file)).flatMap((target) => brokenLink(file, target) ?? []).map((problem) => `${file}: ${problem}`));
    expect(broken).toEqual([]);
  });

  it('reaches every page of docs/ from docs/README.md', () => {
    const reached = new Set<string>();
    const queue = ['docs/README.md'];
    for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
      if (reached.has(file)) continue;
      reached.add(file);
      for (const target of linkTargets(read(file))) {
        const filePart = target.split('#')[0]!;
        if (!filePart.endsWith('.md') || /^[a-z][a-z0-9+.-]*:/i.test(filePart)) continue;
        const next = path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, file)), decodeURIComponent(filePart)));
        if (next.startsWith('docs/') && existsSync(path.join(ROOT, next))) queue.push(next);
      }
    }
    expect(filesUnder('docs', '.md').filter((page) => !reached.has(page)).sort()).toEqual([]);
  });
});

describe('docs/configuration.md', () => {
  const page = read('docs/configuration.md');
  const start = page.indexOf('<!-- configuration-variables:start -->');
  const end = page.indexOf('<!-- configuration-variables:end -->');

  it('documents exactly the variables src/config/env.ts reads, in one table', () => {
    const source = read('src/config/env.ts');
    const schema = source.slice(source.indexOf('const envSchema = z'), source.indexOf('.superRefine('));
    const readByServer = [...schema.matchAll(/^ {4}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]!);
    expect(readByServer.length).toBeGreaterThan(30); // the parse was found
    expect(start).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    const documented = variablesInFirstColumn(page.slice(start, end));
    expect({ undocumented: readByServer.filter((v) => !documented.includes(v)).sort(), notRead: documented.filter((v) => !readByServer.includes(v)).sort() }).toEqual({ undocumented: [], notRead: [] });
  });

  it('names no other program\'s variable that nothing in the repository reads', () => {
    const others = variablesInFirstColumn(page.slice(end));
    expect(others.length).toBeGreaterThan(0);
    const code = [...['src', 'web/src', 'test', 'bench', 'scripts', 'deploy'].flatMap((dir) => [...filesUnder(dir, '.ts'), ...filesUnder(dir, '.tsx'), ...filesUnder(dir, '.mjs'), ...filesUnder(dir, '.sh')]), 'web/vite.config.ts', 'docker-compose.yml']
      .filter((file) => statSync(path.join(ROOT, file)).isFile())
      .map(read)
      .join('\n');
    expect(others.filter((name) => !code.includes(name))).toEqual([]);
  });
});
