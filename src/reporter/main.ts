/**
 * Entry point of the node reporter: `tsx src/reporter/main.ts` (or `bootorch reporter` once the CLI
 * wires it). Reads BOOTORCH_URL, BOOTORCH_TOKEN or BOOTORCH_TOKEN_FILE, NODE_IDENTITY and
 * /proc/cmdline (CMDLINE_FILE overrides), then reports until SIGTERM.
 */
import { agentConfigFromEnv, startReporterAgent } from './agent.ts';

const agent = startReporterAgent(agentConfigFromEnv(), { log: (m) => console.error(m) });
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => agent.stop());
await agent.done;
