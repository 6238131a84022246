// The page's shell: one store for the whole page, the engine (a Web Worker around the JS API,
// see shared/engine-client.js), the view(s) mounted on them, the URL hash kept in step with the
// settings, and the theme. The views live in views/; what they share with the <attention-lens>
// element lives in shared/. User text (tokens, the hash, files) is only ever placed with
// textContent or attributes, never parsed as HTML.
import { $ } from './shared/dom.js';
import { EngineClient } from './shared/engine-client.js';
import { hashToState, stateToHash } from './shared/state.js';
import { filesNeededText, initialPageState, pageDefaults, pageSchema } from './page-settings.js';
import { createStore } from './shared/store.js';
import { mountMessages } from './views/messages.js';
import { mountModel } from './views/model/index.js';
import { mountCircuits } from './views/circuits/index.js';
import { ModelSession } from './shared/model-session/session-client.js';
import { mountTrain } from './views/train/index.js';
import { mountWalkthrough } from './views/walkthrough/index.js';
import { setPageState } from './shared/page-state.js';

// The page's whole state (its slices are listed in page-settings.js, initialPageState).
const store = createStore(initialPageState());
mountMessages(store);
let views = {}; // tab -> { render, activate? }, once mounted
const redraw = () => views[store.get().settings.tab]?.render();

const THEMES = ['auto', 'light', 'dark'];

function wireTheme(redraw) {
  const apply = (theme) => {
    if (theme === 'auto') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
    $('theme').textContent = `Theme: ${theme}`;
    try { localStorage.setItem('attention-lens-theme', theme); } catch { /* storage may be off */ }
  };
  let theme = 'auto';
  try { theme = localStorage.getItem('attention-lens-theme') ?? 'auto'; } catch { /* storage may be off */ }
  if (!THEMES.includes(theme)) theme = 'auto';
  apply(theme);
  $('theme').addEventListener('click', () => {
    theme = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length];
    apply(theme);
    redraw();
  });
  matchMedia('(prefers-color-scheme: dark)').addEventListener?.('change', () => redraw());
}

// The settings from a link (parsed once the core's catalog is known); what was ignored is said, and
// the files a link made with a model from files needs (the Your model view waits for them).
function readHash(schema) {
  const { state, ignored } = hashToState(location.hash, schema, pageDefaults);
  const notes = [...(ignored.length ? [`Ignored in the link: ${ignored.join(', ')}.`] : []),
    ...(state.files?.length ? [filesNeededText(state.files, state.knock)] : [])];
  return { settings: state, pinned: null, linkNotice: notes.join(' ') };
}

// The URL follows the settings a moment after the last change (replaceState is slow enough to
// notice on every keystroke); a link opened later (hashchange) becomes the settings.
function syncHash(schema) {
  let timer = 0;
  store.subscribe((now, before) => {
    if (now.settings === before.settings) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      const hash = stateToHash(store.get().settings, schema, pageDefaults);
      if (hash !== location.hash && !(hash === '' && location.hash === '')) {
        history.replaceState(null, '', hash || location.pathname + location.search);
      }
    }, 150);
  });
  window.addEventListener('hashchange', () => {
    const next = readHash(schema);
    if (stateToHash(next.settings, schema, pageDefaults) !== stateToHash(store.get().settings, schema, pageDefaults)) store.set(next);
  });
}

// The tab bar (Walkthrough | Train | Your model | Circuits): the shown view is settings.tab (in the URL).
function wireTabs() {
  const tabs = ['walkthrough', 'train', 'model', 'circuits'];
  const show = (tab) => {
    for (const name of tabs) {
      $(`${name}-view`).hidden = name !== tab;
      $(`tab-${name}`).setAttribute('aria-selected', String(name === tab));
      $(`tab-${name}`).tabIndex = name === tab ? 0 : -1;
    }
    views[tab]?.activate?.();
    views[tab]?.render();
  };
  const pick = (tab) => store.update(({ settings }) => ({ settings: { ...settings, tab } }));
  tabs.forEach((name, i) => {
    $(`tab-${name}`).addEventListener('click', () => pick(name));
    $(`tab-${name}`).addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
      const next = tabs[(i + (e.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length];
      pick(next);
      $(`tab-${next}`).focus();
    });
  });
  store.subscribe((now, before) => {
    if (now.settings.tab !== before.settings.tab) show(now.settings.tab);
  });
  show(store.get().settings.tab);
}

// The footer describes the tab shown: its view's line in the store's footer (setFooter).
function wireFooter() {
  const show = () => {
    const { footer, settings } = store.get();
    $('status').textContent = footer[settings.tab] ?? '';
  };
  store.subscribe((now, before) => {
    if (now.footer !== before.footer || now.settings.tab !== before.settings.tab) show();
  });
  show();
}

async function main() {
  const moduleUrl = new URL('attention-lens.mjs', document.baseURI).href;
  const engine = await EngineClient.start(moduleUrl);
  // The page's one model session: any view that asks a loaded model something shares it (its
  // worker starts the first time a view needs it).
  const session = new ModelSession(moduleUrl);
  const { catalog } = engine.info;
  const schema = pageSchema(catalog);
  store.set(readHash(schema));
  syncHash(schema);
  const pageUrl = () => location.href.split('#')[0] + stateToHash(store.get().settings, schema, pageDefaults);
  views = {
    walkthrough: mountWalkthrough({ store, engine, catalog, pageUrl }),
    train: mountTrain({ store, catalog, moduleUrl }),
    model: mountModel({ store, session }),
  };
  // Circuits works on the model Your model loaded: showing it first starts that view's first load.
  views.circuits = mountCircuits({ store, session, startModel: () => views.model.activate() });
  wireTabs();
  wireFooter();
}

wireTheme(() => redraw());
let resizeTimer = 0;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => redraw(), 150);
});

main().catch((error) => {
  store.set({ error: `Could not start: ${error.message}` });
  setPageState({ ready: true });
});
