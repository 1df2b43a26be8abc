/**
 * The frame of every client command: the global flags, one ApiClient per run, CliErrors printed as
 * one line on stderr with their exit code, and the connection closed afterwards.
 */
import type { Command } from 'commander';
import { ApiClient, CliError, endpointFrom } from './client.ts';
import type { Out } from './output.ts';

export interface GlobalOptions {
  url?: string;
  token?: string;
  tenant?: string;
  json?: boolean;
}

export interface RunContext {
  api: ApiClient;
  opts: GlobalOptions & Record<string, any>;
  out: Out & NodeJS.WritableStream & { isTTY?: boolean };
}

/** Adds --url, --token, --tenant and --json to the program (valid before or after the command). */
export function addGlobalOptions(program: Command): void {
  program
    .option('--url <url>', 'bootorch API (env BOOTORCH_URL; default http://127.0.0.1:4000/graphql)')
    .option(
      '--token <token>',
      'API token, sent as Authorization: Bearer (env BOOTORCH_TOKEN; for a local API, default: the token `bootorch dev` keeps in .data/dev-admin-token)',
    )
    .option('--tenant <name>', 'act as this tenant (Cray-Tenant-Name; env BOOTORCH_TENANT)')
    .option('--json', 'machine-readable output (watch: newline-delimited JSON)');
}

/** Wrap a command body: (ctx, ...positional args) -> exit code (default 0). */
export function action(fn: (ctx: RunContext, ...args: any[]) => Promise<number | void>) {
  return async (...args: unknown[]) => {
    const cmd = args.at(-1) as Command;
    const opts = cmd.optsWithGlobals() as RunContext['opts'];
    let api: ApiClient | undefined;
    try {
      api = new ApiClient(endpointFrom(opts));
      process.exitCode = (await fn({ api, opts, out: process.stdout }, ...args.slice(0, -2))) ?? 0;
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      process.stderr.write(`bootorch: ${e.message}\n`);
      process.exitCode = e.exitCode;
    } finally {
      await api?.close();
    }
  };
}
