/**
 * The services' real API contracts (../shared/contracts, or BOOTORCH_CONTRACTS_DIR) as validators of
 * recorded HTTP exchanges. Swagger 2.0 files (HSM, BSS) are converted to OpenAPI 3 with swagger2openapi;
 * openapi-backend (ajv) matches each exchange to its operation and validates the request (path,
 * query, body) and the response (status, body) against it.
 *
 * Only the paths bootorch and its simulator use are kept, so start-up stays quick; a few defects of
 * the contract files themselves are fixed first (ERRATA, each with its reason).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import formats from 'ajv-formats';
import { OpenAPIBackend, type Request as OARequest } from 'openapi-backend';
import s2o from 'swagger2openapi';
import { it } from 'vitest';
import { parse } from 'yaml';
import type { Exchange } from '../../src/sim/server.ts';
import { contractsDir, contractsMissing, FILES, type ContractService } from '../helpers/contracts-dir.ts';

// ajv-formats is CommonJS; its function sits on `.default` or is the module itself, depending on the loader.
const addFormats = ((formats as unknown as { default?: unknown }).default ?? formats) as (ajv: object) => object;

export type { ContractService };

/** A test that checks exchanges against the contracts: skipped where they are absent, naming why. */
export function contractTest(name: string, fn: () => Promise<void>): void {
  const missing = contractsMissing();
  it.skipIf(missing !== undefined)(missing ? `${name} (not run: ${missing})` : name, fn);
}

/**
 * Our request paths carry the service's version prefix; HSM's contract paths start after it. BOS's are
 * asked for through the gateway (`/apis/bos/v2/...`) or in the mesh (`/v2/...`); its contract has `/v2/...`.
 */
const STRIP: Record<ContractService, RegExp> = { hsm: /^\/hsm\/v2/, pcs: /^$/, bss: /^$/, cfs: /^$/, bos: /^\/apis\/bos/ };

const KEEP: Record<ContractService, RegExp> = {
  hsm: /^\/(State\/Components(\/Query)?|groups(\/\{[^}]+\})?|partitions(\/\{[^}]+\})?|locks\/status)$/,
  pcs: /^\/(transitions|power-status)/,
  bss: /^\/boot\/v1\/(bootparameters|bootscript)$/,
  cfs: /^\/v3\//,
  bos: /^\//,
};

type Doc = Record<string, any>;

/** Fixes to the contract files, applied before validation. Each is a defect of the file, not of the service. */
const ERRATA: Record<ContractService, (doc: Doc) => void> = {
  hsm: (doc) => {
    // ResourceName says `^[0-9a-f_\-.]{1,}$` (hex digits only) while its own comments, the docs and the
    // service accept `[a-z0-9_-.]+`: group labels like `compute-a` and partition `p1` would fail.
    doc.components.schemas.ResourceName.pattern = '^[a-z0-9_\\-.]+$';
  },
  pcs: () => {},
  bss: () => {},
  cfs: () => {},
  bos: (doc) => {
    // BOS's timestamps are naive ISO strings without a zone (bos-v2-behaviour.md §1.3, `2023-06-27T00:33:17`),
    // while the file says `format: date-time`, which needs one; BOS itself answers the zone-less form.
    const updated = doc.components.schemas.V2ComponentLastUpdated;
    delete updated.format;
    updated.pattern = '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d$';
    // In CSM the API gateway (OPA) answers 401 and 403 and no rate limit applies; bootorch checks
    // credentials itself, so every operation may answer them, as problem documents.
    const problem = { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } } } };
    for (const item of Object.values(doc.paths as Record<string, Doc>)) {
      for (const m of ['get', 'put', 'post', 'patch', 'delete']) {
        if (!item[m]) continue;
        for (const status of ['401', '403', '429']) item[m].responses[status] ??= { description: 'refused', ...problem };
      }
    }
  },
};

/**
 * Answers the real services give that their contracts do not declare (csm-services.md notes each).
 * The simulator copies the service, so these are accepted rather than "fixed" into a lie.
 */
const UNDECLARED_BUT_REAL: Record<ContractService, string[]> = {
  hsm: [],
  // PCS code answers 404 for an unknown transition id; its spec lists only 400 and 500 (§2.2).
  pcs: ['get /transitions/{transitionID} 404'],
  bss: [],
  cfs: [],
  bos: [],
};

export interface Violation {
  exchange: string;
  where: 'request' | 'response' | 'route';
  errors: string;
}

export class Contract {
  private constructor(
    readonly service: ContractService,
    private readonly api: OpenAPIBackend,
  ) {}

  static async load(service: ContractService): Promise<Contract> {
    let doc: Doc = parse(readFileSync(path.join(contractsDir(), FILES[service]), 'utf8'));
    const keep = (d: Doc) => (d.paths = Object.fromEntries(Object.entries(d.paths).filter(([p]) => KEEP[service].test(p))));
    keep(doc);
    if (doc.swagger) doc = (await s2o.convertObj(doc as never, { patch: true, warnOnly: true })).openapi as Doc;
    doc.servers = [{ url: '/' }];
    // openapi-backend keys its validators by operationId; some operations (HSM locks/status) have none.
    for (const [p, item] of Object.entries(doc.paths as Record<string, Doc>)) {
      for (const m of ['get', 'put', 'post', 'patch', 'delete']) if (item[m] && !item[m].operationId) item[m].operationId = `${m} ${p}`;
    }
    ERRATA[service](doc);
    const api = new OpenAPIBackend({
      definition: doc as never,
      strict: false,
      validate: true,
      quick: false,
      customizeAjv: (ajv) => {
        addFormats(ajv);
        return ajv;
      },
      ajvOpts: { strict: false, logger: false },
    });
    await api.init();
    return new Contract(service, api);
  }

  /** Problems with one exchange; empty when it satisfies the contract. `request: false` skips the request side. */
  check(x: Exchange, o: { request?: boolean } = {}): Violation[] {
    const name = `${x.method} ${x.path}${x.query ? `?${x.query}` : ''} -> ${x.status}`;
    const query: Record<string, string | string[]> = {};
    for (const [k, v] of new URLSearchParams(x.query)) query[k] = k in query ? [...[query[k]!].flat(), v] : v;
    let body: unknown;
    try {
      body = x.requestBody ? JSON.parse(x.requestBody) : undefined;
    } catch {
      body = x.requestBody;
    }
    const req: OARequest = {
      method: x.method.toLowerCase(),
      path: x.path.replace(STRIP[this.service], '') || '/',
      query,
      headers: x.requestHeaders as Record<string, string>,
      body,
    };
    const op = this.api.matchOperation(req);
    if (!op) return [{ exchange: name, where: 'route', errors: 'no operation in the contract matches this request' }];
    const out: Violation[] = [];
    if (o.request !== false) {
      const r = this.api.validateRequest(req, op);
      if (!r.valid) out.push({ exchange: name, where: 'request', errors: JSON.stringify(r.errors) });
    }
    const isJson = /json/.test(x.responseHeaders['content-type'] ?? '');
    const resBody = isJson && x.responseBody ? JSON.parse(x.responseBody) : x.responseBody || undefined;
    const declared = op.responses?.[String(x.status)] ?? op.responses?.default;
    if (!declared && UNDECLARED_BUT_REAL[this.service].includes(`${op.method} ${op.path} ${x.status}`)) return out;
    if (!declared) {
      out.push({ exchange: name, where: 'response', errors: `status ${x.status} is not declared for ${op.operationId ?? op.path}` });
    } else if (isJson) {
      const r = this.api.validateResponse(resBody, op, x.status);
      if (!r.valid) out.push({ exchange: name, where: 'response', errors: JSON.stringify(r.errors) });
    }
    return out;
  }
}

const loaded = new Map<ContractService, Promise<Contract>>();

/** One loaded contract per service and test file. */
export function contract(service: ContractService): Promise<Contract> {
  if (!loaded.has(service)) loaded.set(service, Contract.load(service));
  return loaded.get(service)!;
}
