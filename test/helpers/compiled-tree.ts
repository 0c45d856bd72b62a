// The server and CLI processes that tests start run from JavaScript compiled once per test run, as
// `npm start` runs dist/, instead of through tsx, which compiled and hooked every module again in every
// process: about 0.9 s of CPU per start, and the suite starts some sixty of them on each database.
// Each file is transpiled on its own (TypeScript's transpileModule: the isolatedModules semantics tsx
// and esbuild use too) into a directory under the package root, so imports of packages and the walk up
// to package.json (src/platform/version.ts) find what they find from dist/.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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

/** Transpiles src/ and migrations/ under `root` into `outDir` (same layout); returns the file count. */
export async function compileTree(root: string, outDir: string): Promise<number> {
  const files = (await Promise.all(SOURCE_DIRS.map((d) => sourceFiles(path.join(root, d))))).flat();
  await Promise.all(
    files.map(async (file) => {
      const relative = path.relative(root, file);
      const { outputText } = ts.transpileModule(await readFile(file, 'utf8'), { compilerOptions: OPTIONS, fileName: file });
      const target = path.join(outDir, relative.replace(/\.ts$/, '.js'));
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, outputText);
    }),
  );
  return files.length;
}

export function removeTree(outDir: string): Promise<void> {
  return rm(outDir, { recursive: true, force: true });
}
