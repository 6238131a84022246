// The model session's Web Worker: owns the one loaded model (session-model.js) so a 500 MB file is
// read and run off the page's thread, and answers any view's requests {id, type}: 'init'
// {moduleUrl, threads}, 'trained' {name}, 'load' {weights, config, tokenizer?, vocab?, merges?} (Files),
// 'hub' {hub, endpoint?, revision?}, 'cancel', 'cached', 'uncache' {repo?}, 'run' {text}, 'ablate'
// {heads, text}, 'generate' {text, prefix, maxTokens, temperature, topK, topP, seed, gen}, 'scores',
// 'layer' {layer, text?}, and the Circuits view's 'circuitPrompts' {clean, corrupted}, 'circuitAnswers'
// {answers}, 'circuitPresetFit' {presets}, 'circuitInduction' {seed}, 'circuit' {kind, …} (session-model.js). Replies {id, ok, value | error} (worker-loop.js); unsolicited updates
// {type: 'update', update}: a load's progress, or a generated token.
import { serveRequests } from '../worker-loop.js';
import { SessionModel } from './session-model.js';

let session = null;

const post = (update) => self.postMessage({ type: 'update', update });
const ask = (name) => (message) => session[name](message);

serveRequests({
  ready: () => Boolean(session),
  notReady: 'the module is still loading',
  handlers: {
    async init(message) {
      const api = await import(/* @vite-ignore */ message.moduleUrl);
      // Threads where the page is cross-origin isolated (a real model's forward splits over them):
      // 'auto', or 1 when the page's retry of a stalled start asks for it (view-worker-client.js).
      session = new SessionModel(await api.loadAttentionLens({ threads: message.threads ?? 'auto' }), post);
      return session.info();
    },
    ...Object.fromEntries(['load', 'trained', 'hub', 'cancel', 'cached', 'uncache', 'run', 'ablate', 'generate', 'scores', 'layer',
      'circuitPrompts', 'circuitAnswers', 'circuitPresetFit', 'circuitInduction', 'circuit']
      .map((name) => [name, ask(name)])),
  },
  transferables: (value) => (value?.attention ?? []).map((a) => a.buffer),
});
