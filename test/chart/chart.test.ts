/**
 * The Helm chart (chart/bootorch) rendered by a real helm (BOOTORCH_HELM, from scripts/helm.sh) with
 * the values a site sets in several ways, every manifest checked against Kubernetes' schemas
 * (test/helpers/k8s-schemas.ts), and what the chart promises checked on the rendered objects: the
 * migration runs before the pods of an install or upgrade, the probes, the budget, the secrets by
 * reference, the read-only root, the alert rules being alerts.yml's. Only with BOOTORCH_CHART_TESTS=1
 * (.ci/run sets it, and BOOTORCH_HELM).
 */
import { execFile } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { validateManifests, type Manifest } from '../helpers/k8s-schemas.ts';
import { ROOT } from '../helpers/processes.ts';

const on = process.env.BOOTORCH_CHART_TESTS === '1';
const CHART = path.join(ROOT, 'chart/bootorch');
const DB = ['--set', 'secrets.databaseUrl.value=postgres://bootorch:pw@db:5432/bootorch'];

function helm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = process.env.BOOTORCH_HELM;
  if (!bin) throw new Error('BOOTORCH_HELM is not set: run scripts/helm.sh (it prints the path)');
  return new Promise((resolve) =>
    execFile(bin, args, { cwd: ROOT, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

async function render(args: string[]): Promise<Manifest[]> {
  const r = await helm(['template', 'site', CHART, '--namespace', 'services', ...args]);
  if (r.code !== 0) throw new Error(`helm template ${args.join(' ')}: ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are read as plain data, shape checked by the assertions
type Data = any;

const find = (ms: Manifest[], kind: string, nameEnd: string) => {
  const m = ms.find((x) => x.kind === kind && x.metadata?.name?.endsWith(nameEnd));
  if (!m) throw new Error(`no ${kind} *${nameEnd} in ${ms.map((x) => `${x.kind}/${x.metadata?.name}`).join(', ')}`);
  return m as Data;
};

// The ways a site sets the chart up: values only; every secret by reference with a CA bundle and
// OIDC; a restricted egress; standalone without monitoring or budgets.
const VARIANTS: Record<string, string[]> = {
  defaults: DB,
  'existing secrets, CA, OIDC': [
    ...['secrets.databaseUrl.existingSecret=bootorch-db', 'secrets.csmToken.existingSecret=csm-token'],
    ...['secrets.sealingKey.existingSecret=bootorch-sealing', 'csm.caConfigMap=platform-ca', 'csm.s3Url=https://rgw-vip'],
    ...['auth.mode=both', 'auth.oidc.issuer=https://keycloak/realms/shasta', 'imagePullSecrets[0]=regcred'],
  ].flatMap((s) => ['--set', s]),
  'egress restricted': [...DB, '--set-json', 'networkPolicy.egress=[{"to":[{"ipBlock":{"cidr":"10.0.0.0/8"}}],"ports":[{"port":5432}]}]'],
  'standalone, no monitoring': [
    ...[
      'secrets.databaseUrl.value=postgres://db/bootorch',
      'adapters=standalone',
      'secrets.sealingKey.value=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    ],
    ...['metrics.serviceMonitor.enabled=false', 'metrics.prometheusRule.enabled=false', 'api.podDisruptionBudget.enabled=false'],
    ...['networkPolicy.enabled=false', 'migration.enabled=false', 'env.BOOTORCH_RATE_LIMIT_PER_SECOND=100'],
  ].flatMap((s) => ['--set', s]),
};

describe.skipIf(!on)('the Helm chart', () => {
  it('passes helm lint --strict', async () => {
    const r = await helm(['lint', '--strict', CHART, ...DB]);
    expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
  });

  for (const [variant, args] of Object.entries(VARIANTS)) {
    it(`renders valid manifests: ${variant}`, async () => {
      const ms = await render(args);
      expect(ms.length).toBeGreaterThan(3);
      expect(await validateManifests(ms)).toEqual([]);
      for (const m of ms.filter((x) => ['Deployment', 'Job'].includes(x.kind))) {
        const pod = (m as Data).spec.template.spec;
        expect(pod.securityContext.runAsNonRoot, m.metadata?.name).toBe(true);
        for (const c of pod.containers) expect(c.securityContext.readOnlyRootFilesystem, c.name).toBe(true);
        expect(pod.volumes.find((v: Data) => v.name === 'tmp').emptyDir).toEqual({});
      }
    });
  }

  it('refuses to render without a database URL, naming the value', async () => {
    const r = await helm(['template', 'site', CHART]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/secrets\.databaseUrl/);
  });

  it('has the schema validation fail a wrong manifest (the check can fail)', async () => {
    const ms = await render(DB);
    const api = structuredClone(find(ms, 'Deployment', '-api'));
    api.spec.template.spec.containers[0].readinesProbe = api.spec.template.spec.containers[0].readinessProbe;
    api.spec.replicas = 'two';
    const problems = await validateManifests([api]);
    expect(problems.join('\n')).toMatch(/replicas must be integer/);
    expect(problems.join('\n')).toMatch(/readinesProbe/);
  });

  it('migrates before the pods of an install or upgrade, with the secrets made before it', async () => {
    const ms = await render(DB);
    const job = find(ms, 'Job', '-migrate');
    const secret = find(ms, 'Secret', 'site-bootorch');
    expect(job.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(job.spec.template.spec.containers[0].args).toEqual(['migrate']);
    expect(secret.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(Number(secret.metadata.annotations['helm.sh/hook-weight'])).toBeLessThan(
      Number(job.metadata.annotations['helm.sh/hook-weight']),
    );
    expect(Buffer.from(secret.data['database-url'], 'base64').toString()).toBe('postgres://bootorch:pw@db:5432/bootorch');
  });

  it('runs the api as probed replicas under a disruption budget, and the workers beside them', async () => {
    const ms = await render(DB);
    const api = find(ms, 'Deployment', '-api');
    const worker = find(ms, 'Deployment', '-worker');
    const pdb = find(ms, 'PodDisruptionBudget', '-api');
    const svc = find(ms, 'Service', '-api');
    expect(api.spec.replicas).toBeGreaterThanOrEqual(2);
    const c = api.spec.template.spec.containers[0];
    expect(c.args).toEqual(['api']);
    expect(c.readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(pdb.spec.selector.matchLabels).toEqual(api.spec.template.metadata.labels);
    expect(svc.spec.selector).toEqual(api.spec.template.metadata.labels);
    expect(worker.spec.template.spec.containers[0].args).toEqual(['worker']);
    expect(worker.spec.template.spec.containers[0].readinessProbe.httpGet.path).toBe('/healthz');
    expect(worker.spec.template.metadata.labels).not.toEqual(api.spec.template.metadata.labels);
  });

  it('reads every secret from an existing Secret by reference, as files where they are re-read', async () => {
    const ms = await render(VARIANTS['existing secrets, CA, OIDC']!);
    expect(ms.filter((m) => m.kind === 'Secret')).toEqual([]);
    const pod = find(ms, 'Deployment', '-worker').spec.template.spec;
    const env = Object.fromEntries(pod.containers[0].env.map((e: Data) => [e.name, e.value ?? e.valueFrom]));
    expect(env.DATABASE_URL).toEqual({ secretKeyRef: { name: 'bootorch-db', key: 'database-url' } });
    expect(env.CSM_TOKEN_FILE).toBe('/etc/bootorch/csm-token/token');
    expect(env.BOOTORCH_SECRET_KEY_FILE).toBe('/etc/bootorch/sealing-key/key');
    expect(env.CSM_CA_FILE).toBe('/etc/bootorch/csm-ca/ca.crt');
    expect(env.OIDC_ISSUER).toBe('https://keycloak/realms/shasta');
    const volumes = Object.fromEntries(pod.volumes.map((v: Data) => [v.name, v]));
    expect(volumes['csm-token'].secret.secretName).toBe('csm-token');
    expect(volumes['sealing-key'].secret.secretName).toBe('bootorch-sealing');
    expect(volumes['csm-ca'].configMap.name).toBe('platform-ca');
  });

  it("has the PrometheusRule carry alerts.yml's rules as they are", async () => {
    expect(readlinkSync(path.join(CHART, 'files/alerts.yml'))).toBe('../../../observability/prometheus/alerts.yml');
    const shipped = parse(readFileSync(path.join(ROOT, 'observability/prometheus/alerts.yml'), 'utf8'));
    const rule = find(await render(DB), 'PrometheusRule', 'site-bootorch');
    expect(rule.spec.groups).toEqual(shipped.groups);
    const monitor = find(await render(DB), 'ServiceMonitor', 'site-bootorch');
    expect(monitor.spec.endpoints[0]).toMatchObject({ port: 'metrics', path: '/metrics' });
  });

  it('lets only the monitoring namespace reach /metrics, and DNS out when egress is restricted', async () => {
    const ms = await render(VARIANTS['egress restricted']!);
    const np = find(ms, 'NetworkPolicy', '-worker');
    expect(np.spec.ingress).toEqual([
      {
        ports: [{ port: 'metrics', protocol: 'TCP' }],
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
      },
    ]);
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(np.spec.egress[0].ports).toContainEqual({ port: 53, protocol: 'UDP' });
  });
});
