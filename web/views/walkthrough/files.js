// The walkthrough's outward actions: a reader's .safetensors weights (load, back to seeded,
// download), the share link and the walkthrough's Embed content. Files are read as bytes and handed to the
// core; snippets are placed in read-only text areas as text.
import { $ } from '../../shared/dom.js';
import { formatBytes } from '../../shared/format.js';
import { embedSource, wireEmbedDialog } from '../../shared/embed-dialog.js';
import { elementSnippet, iframeSnippet } from '../../shared/embed-snippet.js';
import { download } from './exporting.js';
import { linkSummary } from '../../page-settings.js';

const MAX_WEIGHTS = 64 * 1024 * 1024;

/**
 * `compute()` recomputes the settings with the engine's current weights; `show(result)` puts a
 * result on screen.
 */
export function wireWeightsFile(store, engine, { compute, show }) {
  const input = $('weights-file');
  input.addEventListener('change', async () => {
    const file = input.files?.[0];
    if (!file) return;
    if (file.size > MAX_WEIGHTS) {
      store.set({ error: `${file.name} is ${formatBytes(file.size)}; weight files up to ${formatBytes(MAX_WEIGHTS)} are accepted` });
      return;
    }
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      show(await engine.loadWeights(file.name, bytes, store.get().settings));
    } catch (error) {
      store.set({ error: `Could not load ${file.name}: ${error.message}` });
    } finally {
      input.value = '';
    }
  });
  $('weights-clear').addEventListener('click', async () => {
    await engine.clearWeights();
    compute();
  });
  $('weights-save').addEventListener('click', async () => {
    try {
      const bytes = await engine.saveWeights();
      download(new Blob([bytes], { type: 'application/octet-stream' }), 'attention-weights.safetensors');
    } catch (error) {
      store.set({ error: error.message });
    }
  });
}

/**
 * The share link, and the walkthrough's Embed content (the live element snippet and an iframe of
 * the page; shared/embed-dialog.js's one dialog shows it). `pageUrl()` is the link to the view; the
 * notice says what it restores and what it cannot hold (page-settings.js's linkSummary).
 */
export function wireShareAndEmbed(store, pageUrl) {
  $('share').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(pageUrl());
      store.set({ notice: `Link copied. ${linkSummary(store.get())}` });
    } catch {
      store.set({ notice: `Copy this link: ${pageUrl()} — ${linkSummary(store.get())}` });
    }
  });
  embedSource('walkthrough', async () => {
    const { settings } = store.get();
    return { live: { element: elementSnippet(settings), iframe: iframeSnippet(pageUrl()), model: settings.model } };
  });
  wireEmbedDialog(store);
}
