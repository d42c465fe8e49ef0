// node:fs as it is, plus globSync (see globsync.mjs).
export * from 'node:fs';
export { default } from 'node:fs';
export { globSync } from 'glob';
