#!/usr/bin/env node
// `npx bootorch ...`: run the TypeScript CLI (src/main.ts) in this process through tsx's loader,
// so signals, stdio and the exit code are the CLI's own.
import { register } from 'tsx/esm/api';

register();
await import(new URL('../src/main.ts', import.meta.url).href);
