/**
 * Client commands: `template`, `session`, `component`, `apply-staged`, `options`, `node`, `console`. Each is a GraphQL
 * client of the API (src/cli/client.ts); the endpoint and token come from --url / BOOTORCH_URL and
 * --token / BOOTORCH_TOKEN. Exit codes: 0 ok, 1 the operation failed or a watched session ended with
 * failures, 2 bad usage, 3 the API is unreachable or refused the token.
 */
import type { Command } from 'commander';
import { addGlobalOptions } from './run.ts';
import { registerTemplateCommands } from './templates.ts';
import { registerSessionCommands } from './sessions.ts';
import { registerComponentCommands } from './components.ts';
import { registerExplainCommands } from './explain.ts';
import { registerNodeCommands } from './nodes.ts';
import { registerConsoleCommands } from './console.ts';

export function registerClientCommands(program: Command): void {
  addGlobalOptions(program);
  registerTemplateCommands(program);
  registerSessionCommands(program);
  registerComponentCommands(program);
  registerExplainCommands(program);
  registerNodeCommands(program);
  registerConsoleCommands(program);
}
