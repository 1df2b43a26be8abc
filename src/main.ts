/**
 * `bootorch`: one CLI, several roles (dev, api, worker, sim) and the client commands.
 */
import { Command } from 'commander';
import { ConfigError, loadConfig } from './config.ts';
import type { Stoppable } from './roles.ts';
import { flushTracing } from './observability/tracing.ts';

// The roles pull in the server, the engine and the simulator; client commands need none of that,
// so they are loaded only when a role runs (a client command starts in a fraction of the time).
const roles = () => import('./roles.ts');
import { registerClientCommands } from './cli/index.ts';
import { registerTokenCommands } from './cli/token.ts';
import { registerSimCommands } from './cli/sim.ts';

const program = new Command('bootorch').description('Boot orchestration for large clusters').showHelpAfterError();

function config() {
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
}

function untilSignal(s: Stoppable): void {
  let stopping = false;
  const stop = async (sig: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    process.stderr.write(`\n${sig}: stopping...\n`);
    await s.stop().catch((e) => process.stderr.write(`${e}\n`));
    await flushTracing();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

program
  .command('dev')
  .description('API + workers + simulated cluster in one process (embedded PostgreSQL unless DATABASE_URL)')
  .action(async () => {
    const c = config();
    const { runDev, devTokenFile } = await roles();
    const s = await runDev(c);
    process.stdout.write(
      [
        '',
        `bootorch is running: ${s.api.url}  (subscriptions: ${s.api.wsUrl})`,
        `BOS v2 REST: ${s.api.baseUrl}/apis/bos/v2  (and ${s.api.baseUrl}/v2)`,
        ...(s.devAdminToken
          ? [
              `admin token (dev mode; also in ${devTokenFile(c)}):`,
              `  ${s.devAdminToken}`,
              `  send it as "Authorization: Bearer <token>"; the CLI reads BOOTORCH_TOKEN`,
            ]
          : []),
        `simulated cluster: ${c.SIM_NODES} compute nodes + River management/UAN nodes; templates: compute, uan`,
        'try:  npx bootorch session create --template compute --operation reboot --limit compute-a --watch',
        '',
      ].join('\n'),
    );
    untilSignal(s);
  });

program
  .command('api')
  .description('GraphQL API (HTTP + graphql-ws); enqueues work, runs no operator')
  .action(async () => {
    const { runApi } = await roles();
    const s = await runApi(config());
    process.stdout.write(`bootorch api: ${s.api.url}\nBOS v2 REST: ${s.api.baseUrl}/apis/bos/v2\n`);
    untilSignal(s);
  });

program
  .command('worker')
  .description('every operator on pg-boss, against BOOTORCH_ADAPTERS (sim or http)')
  .option('--health-port <port>', 'serve /healthz on this port', (v) => Number(v))
  .action(async (o: { healthPort?: number }) => {
    const { runWorker } = await roles();
    const s = await runWorker(
      config(),
      o.healthPort ?? (process.env.WORKER_HEALTH_PORT ? Number(process.env.WORKER_HEALTH_PORT) : undefined),
    );
    untilSignal(s);
  });

program
  .command('migrate')
  .description("apply the database's pending migrations (bootorch's and the job queue's), then exit")
  .action(async () => {
    const { migrate } = await import('./migrate.ts');
    await migrate(config());
  });

registerClientCommands(program);
registerTokenCommands(program, config);
registerSimCommands(program, config, untilSignal);

program.parseAsync(process.argv).catch((e) => {
  process.stderr.write(`bootorch: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
