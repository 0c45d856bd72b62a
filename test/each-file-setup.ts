// Run by vitest before each test file (setupFiles), so this hook is registered for every file, first:
// after-all hooks run in reverse order, so it runs after the file's own (its apps and servers closed).
import { afterAll } from 'vitest';
import { runFileCleaners } from './helpers/file-cleanup.js';

afterAll(runFileCleaners);
