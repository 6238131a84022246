// Bundles the JS API's ES modules (web/api/attention-lens-api.js and what it imports) into one ES
// file for Emscripten's --extern-post-js: CMake runs it before linking each module, so
// dist/attention-lens.mjs is the Emscripten glue followed by the API. The API's globals
// (createAttentionLensCore, ATTN_*) stay free names the glue and the --extern-pre-js define.
// Usage: node scripts/bundle-api.mjs <out.js>
import { rolldown } from 'rolldown';
import { fileURLToPath } from 'node:url';

const out = process.argv[2];
if (!out) throw new Error('usage: node scripts/bundle-api.mjs <out.js>');
const entry = fileURLToPath(new URL('../web/api/attention-lens-api.js', import.meta.url));
const bundle = await rolldown({ input: entry, treeshake: false, platform: 'neutral' });
await bundle.write({ file: out, format: 'es', minify: false, sourcemap: false });
await bundle.close();
