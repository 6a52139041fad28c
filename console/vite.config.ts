import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The console is served by the service itself at /console/ (src/routes/console.ts), from dist/console.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  // JSX for Preact through Vite's own transform (no Babel).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
