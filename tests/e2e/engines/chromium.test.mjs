// The shared page checks (checks.mjs) in chromium.
import { engineSuite } from './checks.mjs';

engineSuite('chromium');
