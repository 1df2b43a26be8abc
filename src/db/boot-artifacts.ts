/** `boot_artifacts`: BSS referral token -> the boot artifacts bootorch set with it (BOS's DB 4). */
import type { Db } from './client.ts';
import { bootArtifacts } from './schema.ts';
import { anyOf } from './sql.ts';
import type { Artifacts } from '../domain/components.ts';

/** Power-on: the token -> artifacts record the reporter's token is later mapped through. */
export async function recordBootArtifacts(db: Db, token: string, a: Artifacts): Promise<void> {
  await db
    .insert(bootArtifacts)
    .values({ token, ...a })
    .onConflictDoNothing({ target: bootArtifacts.token });
}

/** The boot artifacts bootorch recorded for these BSS tokens. */
export async function artifactsForTokens(db: Db, tokens: readonly string[]): Promise<Map<string, Artifacts>> {
  const out = new Map<string, Artifacts>();
  if (tokens.length === 0) return out;
  const rows = await db
    .select({
      token: bootArtifacts.token,
      kernel: bootArtifacts.kernel,
      kernelParameters: bootArtifacts.kernelParameters,
      initrd: bootArtifacts.initrd,
    })
    .from(bootArtifacts)
    .where(anyOf(bootArtifacts.token, [...new Set(tokens)]));
  for (const { token, ...a } of rows) out.set(token, a);
  return out;
}
