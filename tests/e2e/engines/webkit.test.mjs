// The shared page checks (checks.mjs) in webkit.
import { engineSuite } from './checks.mjs';

engineSuite('webkit');
