import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

// The staff's web app: Preact through esbuild's automatic JSX runtime (no Babel preset needed), built into
// dist/web beside the compiled service, which serves it at `/` (src/http/web-app.ts).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  resolve: { alias: { react: 'preact/compat', 'react-dom': 'preact/compat' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // One small bundle; no inline module preload polyfill, so the page's policy needs no inline script.
    modulePreload: false,
    reportCompressedSize: true,
  },
  // The dev server's page calls the service for its API and for its sign-in settings.
  server: { proxy: { '/api': 'http://127.0.0.1:8080', '/web-config.json': 'http://127.0.0.1:8080' } },
})
