// The page's two banners, drawn from the store: `error` (a compute or input the core rejected;
// the last good result stays on screen) and the notice (`linkNotice`, what a shared link held
// that could not be used, until the next link, then the view's own `notice`). Text only.
import { $ } from '../shared/dom.js';

export function mountMessages(store) {
  const draw = ({ error, notice, linkNotice }) => {
    $('error').hidden = !error;
    $('error').textContent = error ? `${error} (The last good result stays on screen.)` : '';
    const text = [linkNotice, notice].filter(Boolean).join(' ');
    $('notice').hidden = !text;
    $('notice').textContent = text;
  };
  store.subscribe((now, before) => {
    if (now.error !== before.error || now.notice !== before.notice || now.linkNotice !== before.linkNotice) draw(now);
  });
  draw(store.get());
}
