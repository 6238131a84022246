// Builds the page (web/) into dist/. The JS API module is not bundled: the page imports
// dist/attention-lens.mjs at run time, the same file every other user gets.
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'web',
  base: './',
  publicDir: false,
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    target: 'es2022',
    rollupOptions: { input: 'web/index.html' },
  },
  worker: { format: 'es' },
});
