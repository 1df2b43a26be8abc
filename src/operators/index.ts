import type { OperatorDef } from '../engine/operator.ts';
import { sessionSetup } from './session-setup.ts';
import { createStatus } from './status.ts';
import { powerOn } from './power-on.ts';
import { powerOffGraceful } from './power-off-graceful.ts';
import { powerOffForceful } from './power-off-forceful.ts';
import { configuration } from './configuration.ts';
import { deployToDisk } from './deploy-to-disk.ts';
import { sessionCompletion } from './session-completion.ts';
import { sessionCleanup } from './session-cleanup.ts';
import { discovery } from './discovery.ts';
import { actualStateCleanup } from './actual-state-cleanup.ts';
import { powerDrift } from './power-drift.ts';

/**
 * Every operator, in the order a session meets them, for one engine: the status operator's pass
 * state is its own (operators/status.ts StatusPasses), so each engine gets a fresh set.
 */
export const createOperators = (): OperatorDef[] => [
  sessionSetup,
  createStatus(),
  powerOffGraceful,
  powerOffForceful,
  powerOn,
  deployToDisk,
  configuration,
  sessionCompletion,
  sessionCleanup,
  discovery,
  actualStateCleanup,
  powerDrift,
];
