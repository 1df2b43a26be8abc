/**
 * A node's hardware as its BMC last described it (docs/discovery.md): shown on the node page of a
 * site bootorch keeps the inventory of (standalone); nothing on a CSM site, where the nodes query
 * answers FAILED_PRECONDITION, or for a tenant, who does not read the site's inventory.
 */
import { useQuery } from 'urql';
import { NodeHardwareQuery } from '../queries.ts';

const gib = (bytes: number) => `${Math.round(bytes / 2 ** 30).toLocaleString()} GiB`;

export function HardwareCard({ id }: { id: string }) {
  const [r] = useQuery({ query: NodeHardwareQuery, variables: { id } });
  const n = r.data?.nodes[0];
  if (r.error || !n) return null;
  const h = n.hardware;
  return (
    <section data-testid="hardware">
      <h2>Hardware</h2>
      {!h ? (
        <p className="muted">Not inspected yet: `bootorch node inspect {id}` reads it from its BMC.</p>
      ) : (
        <dl>
          <dt>system</dt>
          <dd>
            {[h.manufacturer, h.model].filter(Boolean).join(' ') || '—'}
            {h.serialNumber && <span className="muted"> (serial {h.serialNumber})</span>}
          </dd>
          <dt>CPUs</dt>
          <dd>
            {h.cpuCount ?? '—'}
            {h.cpuModel && ` × ${h.cpuModel}`}
          </dd>
          <dt>memory</dt>
          <dd data-testid="hardware-memory">{h.memoryGiB === null || h.memoryGiB === undefined ? '—' : `${h.memoryGiB} GiB`}</dd>
          <dt>disks</dt>
          <dd>{h.disks.length ? h.disks.map((d) => `${d.name || d.model} ${gib(d.capacityBytes)}`).join(', ') : '—'}</dd>
          <dt>NICs</dt>
          <dd className="mono">{h.macs.join(', ') || '—'}</dd>
          <dt>BIOS</dt>
          <dd className="mono">{h.biosVersion || '—'}</dd>
          <dt>BMC firmware</dt>
          <dd className="mono">{h.bmcFirmwareVersion || '—'}</dd>
          <dt>BMC</dt>
          <dd className="mono">
            {n.bmc.driver.toLowerCase()} {n.bmc.address}
          </dd>
          <dt>inspected</dt>
          <dd>{n.inspectedAt ? new Date(n.inspectedAt).toLocaleString() : '—'}</dd>
        </dl>
      )}
    </section>
  );
}
