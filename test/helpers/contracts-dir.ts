/**
 * Where the services' real API contracts are (../shared/contracts beside the project, or
 * BOOTORCH_CONTRACTS_DIR), and whether they are there. Kept apart from the validator so the global
 * setup can say, once per run, that the contract checks were skipped and why.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type ContractService = 'hsm' | 'pcs' | 'bss' | 'cfs' | 'bos';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const FILES: Record<ContractService, string> = {
  hsm: 'hsm.swagger.yaml',
  pcs: 'pcs.swagger.yaml',
  bss: 'bss.swagger.yaml',
  cfs: 'cfs.openapi.yaml',
  bos: 'bos-v2.openapi.yaml',
};

export function contractsDir(): string {
  return path.resolve(process.env.BOOTORCH_CONTRACTS_DIR ?? path.join(projectRoot, '../shared/contracts'));
}

/**
 * Why the contract checks cannot run here, or undefined when they can. The contract files are not
 * part of this repository (docs/testing.md, "Contract tests"); .ci/run requires them, a plain clone skips them.
 */
export function contractsMissing(): string | undefined {
  const dir = contractsDir();
  const absent = Object.values(FILES).filter((f) => !existsSync(path.join(dir, f)));
  if (absent.length === 0) return undefined;
  return `contract files not found in ${dir} (${absent.join(', ')}); set BOOTORCH_CONTRACTS_DIR to the folder that holds them`;
}
