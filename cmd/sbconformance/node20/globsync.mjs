// node --import ./node20/globsync.mjs: the conformance CLI imports fs.globSync, which Node 22
// added. On Node 20 this hook hands the CLI a copy of node:fs that also has globSync, from the
// pinned glob package (same call shape for the one use, tier-check's "**/checks.json"). Nothing
// else is touched: other importers of fs get the real module, and on Node >= 22 no hook is set.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  register('./resolve-fs.mjs', import.meta.url);
}
