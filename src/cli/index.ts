import type { Command } from 'commander';

/** Client commands (template, session, component, options, watch) talk to the API over GraphQL. */
export function registerClientCommands(_program: Command): void {}
