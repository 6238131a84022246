// Writes DIR/NAME.js for every model in DIR/models.json: a classic script that sets
// globalThis.attentionLensModels[NAME] to NAME.safetensors in base64. The <attention-lens>
// element loads it with a <script> tag from beside its own script (works from file:// and under
// script-src 'self', where fetch() of a file:// URL does not), only when a tag names the model.
//   node scripts/data/make-model-scripts.mjs DIR   (scripts/build.sh: dist/models)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) throw new Error('usage: node scripts/data/make-model-scripts.mjs DIR');
const { models } = JSON.parse(readFileSync(join(dir, 'models.json'), 'utf8'));
for (const { name, file } of models) {
  const base64 = readFileSync(join(dir, file)).toString('base64');
  const script = `// The ${name} trained model of Attention Lens (${file}, base64) for <attention-lens model="${name}">.\n` +
    `(globalThis.attentionLensModels ||= {})[${JSON.stringify(name)}] = ${JSON.stringify(base64)};\n`;
  writeFileSync(join(dir, `${name}.js`), script);
  console.log(`[build] ${join(dir, `${name}.js`)}: ${script.length} bytes`);
}
