// The server and CLI processes that tests start run from JavaScript compiled once per test run, as
// `npm start` runs dist/, instead of through tsx, which compiled and hooked every module again in every
// process: about 0.9 s of CPU per start, and the suite starts some sixty of them on each database.
// Each file is transpiled on its own (TypeScript's transpileModule: the isolatedModules semantics tsx
// and esbuild use too) into a directory under the package root, so imports of packages and the walk up
// to package.json (src/platform/version.ts) find what they find from dist/. The tree is kept under a
// hash of the sources, so the second of CI's two passes (and an unchanged local rerun) reuses it.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';

const SOURCE_DIRS = ['src', 'migrations'];

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  // ES modules, as the package's "type": "module" makes every .js file (NodeNext would need to read
  // package.json, which transpileModule does not, and fell back to CommonJS).
  module: ts.ModuleKind.ES2022,
  verbatimModuleSyntax: true,
  esModuleInterop: true,
  inlineSourceMap: true,
  inlineSources: true,
};

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** Trees of other sources older than this are removed when a new one is made. */
const KEEP_OLD_TREES_MS = 24 * 3600_000;
const COMPLETE_MARK = '.complete';

/**
 * The compiled tree of src/ and migrations/ under `root` (same layout, in `root`/.test-build/<hash>),
 * made now unless one of the same sources is there.
 */
export async function compiledTree(root: string): Promise<string> {
  const files = (await Promise.all(SOURCE_DIRS.map((d) => sourceFiles(path.join(root, d))))).flat().sort();
  const texts = await Promise.all(files.map((file) => readFile(file, 'utf8')));
  const hash = createHash('sha256');
  files.forEach((file, i) => hash.update(path.relative(root, file)).update('\0').update(texts[i]!).update('\0'));
  const builds = path.join(root, '.test-build');
  const tree = path.join(builds, hash.digest('hex').slice(0, 16));
  if (existsSync(path.join(tree, COMPLETE_MARK))) return tree;

  await removeOldTrees(builds);
  const partial = `${tree}.partial-${process.pid}`;
  await Promise.all(
    files.map(async (file, i) => {
      const { outputText } = ts.transpileModule(texts[i]!, { compilerOptions: OPTIONS, fileName: file });
      const target = path.join(partial, path.relative(root, file).replace(/\.ts$/, '.js'));
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, outputText);
    }),
  );
  await writeFile(path.join(partial, COMPLETE_MARK), '');
  // Another run may have made the same tree meanwhile: then its copy stays and this one goes.
  await rename(partial, tree).catch(() => rm(partial, { recursive: true, force: true }));
  return tree;
}

async function removeOldTrees(builds: string): Promise<void> {
  const entries = await readdir(builds).catch(() => [] as string[]);
  await Promise.all(
    entries.map(async (name) => {
      const dir = path.join(builds, name);
      // Another run may be removing it at the same moment: gone is as good as removed.
      const made = await stat(dir).catch(() => undefined);
      if (made && Date.now() - made.mtimeMs > KEEP_OLD_TREES_MS) await rm(dir, { recursive: true, force: true });
    }),
  );
}
