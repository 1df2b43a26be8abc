/** A session's approval (domain/approval.ts): its setup marks it waiting; a second admin approves it. */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { sessions } from '../schema.ts';
import { notifySessionChanged } from '../events.ts';
import type { SessionKey } from './rows.ts';

/** Setup found the session needs approval: it stays pending, and setup leaves it until it is approved. */
export async function markAwaitingApproval(db: Db, s: SessionKey, reason: string): Promise<void> {
  await db
    .update(sessions)
    .set({ approvalNeeded: reason })
    .where(and(eq(sessions.tenantKey, s.tenantKey), eq(sessions.name, s.name), eq(sessions.status, 'pending')));
  await notifySessionChanged(db, s.tenantKey, s.name);
}

/** Record the approval if the session still waits for one; true when this call approved it. */
export async function approve(db: Db, s: SessionKey, by: string): Promise<boolean> {
  const rows = await db
    .update(sessions)
    .set({ approvedBy: by, approvedAt: sql`now()` })
    .where(
      and(
        eq(sessions.tenantKey, s.tenantKey),
        eq(sessions.name, s.name),
        eq(sessions.status, 'pending'),
        sql`${sessions.approvalNeeded} <> ''`,
        isNull(sessions.approvedBy),
      ),
    )
    .returning({ name: sessions.name });
  if (rows.length) await notifySessionChanged(db, s.tenantKey, s.name);
  return rows.length > 0;
}
