/**
 * The deploy budget (Ironic's max_concurrent_deploy, plus the network it shares): how many disk deploys
 * may run at once over every session. A deploy takes a slot when its node is let power on into the
 * deploy ramdisk and gives it back when its image is written or it fails (db/deploys.ts admitDeploys);
 * nodes beyond the budget wait powered off (status power_on_pending, explain says why) and start as
 * slots free. Pure.
 *
 * Slots = max_concurrent_deploys, and no more than deploy_image_bandwidth / deploy_node_bandwidth:
 * each admitted deploy downloads at its link's rate, so the images in flight stay within the
 * bandwidth set aside for them, and the whole takes about image size × nodes / bandwidth, the
 * least the network allows, whatever the number admitted beyond that.
 */
import type { Options } from './options.ts';

export type DeployBudgetOptions = Pick<Options, 'max_concurrent_deploys' | 'deploy_image_bandwidth' | 'deploy_node_bandwidth'>;

/** Deploys admitted at once under these options (at least 1). */
export function deploySlots(o: DeployBudgetOptions): number {
  const byBandwidth = o.deploy_image_bandwidth > 0 ? Math.floor(o.deploy_image_bandwidth / o.deploy_node_bandwidth) : Infinity;
  return Math.max(1, Math.min(o.max_concurrent_deploys, byBandwidth));
}

/** The budget in words (explain, the operator's log): what limits it. */
export function deployBudgetWords(o: DeployBudgetOptions): string {
  const slots = deploySlots(o);
  const byBandwidth = o.deploy_image_bandwidth > 0 && slots < o.max_concurrent_deploys;
  return byBandwidth
    ? `${slots} at once (deploy_image_bandwidth ${o.deploy_image_bandwidth} Mbit/s / deploy_node_bandwidth ${o.deploy_node_bandwidth} Mbit/s)`
    : `${slots} at once (max_concurrent_deploys)`;
}

/**
 * The least time the network allows for `nodes` images of `imageBytes`: every byte through the
 * budget's bandwidth (Mbit/s), seconds. The bench reports deploys against it.
 */
export function deployBoundSeconds(imageBytes: number, nodes: number, bandwidthMbps: number): number {
  return (imageBytes * 8 * nodes) / (bandwidthMbps * 1e6);
}
