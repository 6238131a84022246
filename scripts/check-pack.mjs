// npm pack / npm publish (the "prepack" script): refuses to pack before `npm run build`, so the
// tarball never lacks dist/ (it only checks; building needs emcc, which a packer may not have).
import { existsSync, readFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const { files } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const missing = files.filter((file) => !existsSync(new URL(file, root)));
if (missing.length) {
  console.error(`npm pack: ${missing.join(', ')} missing; run \`npm run build\` first`);
  process.exit(1);
}
