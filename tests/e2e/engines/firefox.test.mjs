// The shared page checks (checks.mjs) in firefox.
import { engineSuite } from './checks.mjs';

engineSuite('firefox');
