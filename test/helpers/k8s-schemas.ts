/**
 * Kubernetes manifests checked against Kubernetes' own schemas, as kubeconform -strict would (neither
 * it nor a kube-apiserver can be installed here): kubernetes-models ships the JSON schemas of the API
 * (its OpenAPI document, compiled with ajv: types, required fields, formats) and TypeScript interfaces
 * made from the same document. The schemas catch wrong types and missing fields; the interfaces, by
 * TypeScript's excess property check over each manifest as an object literal, catch unknown fields at
 * any depth (a misspelt `readinesProbe` that Kubernetes would drop without a word).
 * The Prometheus Operator's kinds come from @kubernetes-models/prometheus-operator.
 */
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from './processes.ts';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string };
  [k: string]: unknown;
}

/** The module of a kind's model, e.g. kubernetes-models/apps/v1/Deployment. */
function modelModule(m: Manifest): string {
  const [group, version] = m.apiVersion.includes('/') ? m.apiVersion.split('/') : ['', m.apiVersion];
  if (group === 'monitoring.coreos.com') return `@kubernetes-models/prometheus-operator/${group}/${version}/${m.kind}`;
  return `kubernetes-models/${group ? `${group}/` : ''}${version}/${m.kind}`;
}

const name = (m: Manifest) => `${m.kind} ${m.metadata?.name ?? '(no name)'}`;

/** Every problem found, one line each naming the manifest; empty when all are valid. */
export async function validateManifests(manifests: Manifest[]): Promise<string[]> {
  const problems: string[] = [];
  for (const m of manifests) {
    let model: { validate(): void } | undefined;
    try {
      const mod = (await import(modelModule(m))) as Record<string, new (d: unknown) => { validate(): void }>;
      model = new mod[m.kind]!(m);
    } catch {
      problems.push(`${name(m)}: no schema for ${m.apiVersion} ${m.kind}`);
      continue;
    }
    try {
      model.validate();
    } catch (e) {
      problems.push(`${name(m)}: ${(e as Error).message}`);
    }
  }
  problems.push(...unknownFields(manifests));
  return problems;
}

/** TypeScript's excess property check of each manifest against its kind's interface. */
function unknownFields(manifests: Manifest[]): string[] {
  const file = path.join(ROOT, 'test/.k8s-manifests.ts');
  const lines = manifests.flatMap((m, i) => [
    `import type { I${m.kind} as T${i} } from '${modelModule(m)}';`,
    `export const m${i}: T${i} = ${JSON.stringify(m)};`,
  ]);
  const text = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (f, lang, ...rest) => (f === file ? ts.createSourceFile(f, text, lang) : read(f, lang, ...rest));
  const exists = host.fileExists.bind(host);
  host.fileExists = (f) => f === file || exists(f);
  const program = ts.createProgram([file], options, host);
  const source = program.getSourceFile(file)!;
  return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => {
    const line = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line;
    const m = manifests[Math.floor(line / 2)];
    return `${m ? name(m) : '?'}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}
