/**
 * configuration (BOS operators/configuration.py). Not an action operator: last_action and the
 * attempt counters are untouched.
 * Selects:
 * - enabled components whose status is configuring,
 * - whose CFS desired_config differs from the desired configuration, or whose CFS component is
 *   disabled (a power-on's PATCH {enabled: false} that CFS applied late, after the node's
 *   cfs-state-reporter had re-enabled it: nothing else would ever enable it again).
 * Decides, per page: one CFS components read, and a `configuring` job per component so selected
 * (engine/action-jobs.ts).
 * Does (its jobs, a batch at a time): CFS PATCH {enabled: true, desired_config, tags: {bos_session}}
 * per (configuration, session), without clearing state, then kicks status. A job whose component
 * left `configuring` or wants another configuration meanwhile does nothing.
 */
import { defineOperator } from '../engine/operator.ts';
import { groupBy } from '../domain/lists.ts';
import { done, fromError, type Outcome } from '../engine/outcome.ts';
import { recordComponentOutcomes } from '../engine/component-outcomes.ts';
import { actionJobs } from '../engine/action-jobs.ts';
import { jobRetry } from '../engine/action-operator.ts';
import { selectPages, type EngineComponent } from '../db/components/select.ts';

const ACTION = 'configuring';

export const configuration = defineOperator<EngineComponent>(
  {
    name: 'configuration',
    select: (ctx) => selectPages(ctx.db, { enabled: true, statuses: ['configuring'] }, ctx.options.max_component_batch_size),
    record: recordComponentOutcomes,
    async decidePage(ctx, page) {
      const cfs = new Map((await ctx.adapters.config.getComponents(page.map((c) => c.id))).map((c) => [c.id, c]));
      const todo = page.filter((c) => {
        const now = cfs.get(c.id);
        return now?.desiredConfig !== c.desiredConfiguration || !now.enabled;
      });
      return {
        outcomes: page.map((c) => [c, done]),
        write: todo.length
          ? async (tx) => {
              await ctx.scheduler.enqueueActions(
                tx,
                'configuration',
                actionJobs(
                  todo,
                  ACTION,
                  () => null,
                  (c) => jobRetry(c, ctx.options),
                  (c) => ({ config: c.desiredConfiguration }),
                ),
              );
            }
          : undefined,
      };
    },
  },
  {
    jobs: {
      operator: 'configuration',
      action: ACTION,
      holds: (row, job) =>
        row.status === 'configuring' &&
        row.session === job.session &&
        row.sessionTenant === job.tenant &&
        row.desiredConfiguration === job.config,
      async perform(ctx, rows) {
        const outcomes = new Map<string, Outcome>();
        // One PATCH per (configuration, session); a failing group fails its own jobs only.
        for (const group of groupBy(rows, (c) => JSON.stringify([c.desiredConfiguration, c.session]))) {
          try {
            await ctx.adapters.config.patchComponents(
              group.map((c) => c.id),
              { enabled: true, desiredConfig: group[0]!.desiredConfiguration, tags: { bos_session: group[0]!.session } },
            );
          } catch (e) {
            const o = fromError(e);
            for (const c of group) outcomes.set(c.id, o);
          }
        }
        return outcomes;
      },
      next: () => ({ kick: ['status'] }),
    },
  },
);
