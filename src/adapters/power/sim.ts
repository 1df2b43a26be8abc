/** PowerPort over the simulated world: one counted PCS call per chunk of max_component_batch_size. */
import type { SimWorld } from '../../sim/world.ts';
import { EP, chunks, type SettingsRef } from '../common.ts';
import { pcsPower } from './http.ts';
import type { BootFromDiskProblem, PowerOperation, PowerPort, PowerState, TransitionStatus } from '../ports.ts';

export class SimPower implements PowerPort {
  constructor(
    private readonly world: SimWorld,
    private readonly settings: SettingsRef,
  ) {}

  async powerStatus(ids: string[]): Promise<Map<string, PowerState>> {
    const out = new Map<string, PowerState>();
    for (const chunk of chunks(ids, this.settings.current.maxBatchSize)) {
      await this.world.enter('pcs', EP.pcsPowerStatus, this.settings.timeoutMs('pcs'));
      for (const id of chunk) {
        const n = this.world.node(id);
        const seen = n && this.world.observedPower(n);
        out.set(
          id,
          pcsPower({
            xname: id,
            ...(seen
              ? { powerState: seen.powerState, managementState: seen.managementState }
              : { error: 'Component not found in component map.' }),
          }),
        );
      }
    }
    return out;
  }

  async transition(operation: PowerOperation, ids: string[]): Promise<string[]> {
    const out: string[] = [];
    for (const chunk of chunks(ids, this.settings.current.maxBatchSize)) {
      await this.world.enter('pcs', EP.pcsTransitions, this.settings.timeoutMs('pcs'));
      out.push(this.world.transition(operation, chunk));
    }
    return out;
  }

  async bootFromDisk(ids: string[]): Promise<BootFromDiskProblem[]> {
    await this.world.enter('pcs', EP.pcsTransitions, this.settings.timeoutMs('pcs'));
    return this.world.bootFromDisk(ids).map((id) => ({ id, error: 'Component not found in component map.', transient: false }));
  }

  async getTransition(id: string): Promise<TransitionStatus | undefined> {
    await this.world.enter('pcs', EP.pcsTransition, this.settings.timeoutMs('pcs'));
    const t = this.world.power.transitions.get(id);
    return (
      t && {
        id: t.transitionID,
        operation: t.operation,
        status: t.transitionStatus,
        tasks: t.tasks.map((k) => ({ xname: k.xname, status: k.taskStatus, error: k.error ?? '' })),
      }
    );
  }
}
