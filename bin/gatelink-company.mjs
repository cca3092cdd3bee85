#!/usr/bin/env node
// Runs the TypeScript sources directly; tsx compiles them on the fly.
import { register } from 'tsx/esm/api';

register();
await import('../company/main.ts');
