// <attention-lens>: the one-tag blog embed, bundled by vite.element.config.js with the single-file
// JS API (wasm inlined; the config says where `attention-lens/single-file` comes from) into
// dist/attention-lens-element.js, a classic script that also runs as a module script. It draws
// snapshots (lens-element.js), computes the walkthrough's layer in the page (compute-view.js) and
// loads hub="org/name" models when the reader asks (live-hub.js). A post of snapshots only needs
// attention-lens-snapshot.js (attention-lens-snapshot.js: the same element without the wasm).
import { ComputeView, SCRIPT_URL } from './compute-view.js';
import { defineLensElement } from './lens-element.js';
import { LiveView } from './live-hub.js';

defineLensElement({
  compute: (host) => new ComputeView(host),
  live: (host) => new LiveView(host, { moduleUrl: new URL('attention-lens.mjs', SCRIPT_URL).href }),
});
