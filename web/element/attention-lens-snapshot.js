// <attention-lens> for posts of snapshots only, bundled by vite.snapshot.config.js into
// dist/attention-lens-snapshot.js: the same tag, attributes and drawing code as
// attention-lens-element.js (lens-element.js, snapshot-view.js), without the wasm, the worker or the
// Hub loader. A figure that computes in the page (no snapshot) or names hub="…" says that it needs
// attention-lens-element.js.
import { defineLensElement } from './lens-element.js';

defineLensElement();
