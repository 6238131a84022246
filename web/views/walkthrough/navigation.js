// Stepping through the walkthrough's stages: ← and → (buttons and keys), and Play (button and
// the p key), which moves on every PLAY_EVERY_MS until the last stage. `playing` is in the
// store; the interval's handle is this module's own.
import { $ } from '../../shared/dom.js';
import { stagesOf } from './stage.js';

const PLAY_EVERY_MS = 2200;

export function wireNavigation(store, setSettings) {
  let timer = 0;

  // Moves delta stages on; false when there is no such stage (or no result yet).
  function go(delta) {
    if (!store.get().result) return false;
    const { stages, current } = stagesOf(store.get());
    const next = stages[stages.indexOf(current) + delta];
    if (!next) return false;
    setSettings({ stage: next.id });
    return true;
  }

  function setPlaying(on) {
    clearInterval(timer);
    store.set({ playing: on });
    $('play').setAttribute('aria-pressed', String(on));
    $('play').textContent = on ? 'Pause' : 'Play';
    if (!on) return;
    const { stages, current } = stagesOf(store.get());
    if (current === stages[stages.length - 1]) setSettings({ stage: stages[0].id });
    timer = setInterval(() => { if (!go(1)) setPlaying(false); }, PLAY_EVERY_MS);
  }

  $('prev').addEventListener('click', () => go(-1));
  $('next').addEventListener('click', () => go(1));
  $('play').addEventListener('click', () => setPlaying(!store.get().playing));
  document.addEventListener('keydown', (event) => {
    const tag = event.target?.tagName;
    if (['INPUT', 'TEXTAREA', 'SELECT', 'CANVAS'].includes(tag) || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === 'ArrowRight' || event.key === 'ArrowLeft') {
      if (go(event.key === 'ArrowRight' ? 1 : -1)) event.preventDefault();
    } else if (event.key === 'p' || event.key === 'P') {
      setPlaying(!store.get().playing);
    }
  });
}
