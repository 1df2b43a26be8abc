/**
 * The checks createSession makes, in one place, so planSession (the dry run) reports exactly the
 * errors and warnings createSession would give.
 */
import { getTemplate } from '../db/templates.ts';
import { getOptions } from '../db/options.ts';
import { checkCreateSession, type CreateSessionDraft } from '../domain/sessions.ts';
import { checkBootSets } from '../domain/templates.ts';
import type { Issue } from '../domain/validation.ts';
import { checkArtifacts } from './template-checks.ts';
import type { ApiContext } from './context.ts';

export async function checkSessionInput(ctx: ApiContext, input: CreateSessionDraft) {
  const db = ctx.db;
  const opts = await getOptions(db);
  const rules = { sessionLimitRequired: opts.session_limit_required, rejectNids: opts.reject_nids };
  const checked = checkCreateSession(input, rules);
  const warnings: Issue[] = [...checked.warnings];
  if (!checked.ok) return { session: null, template: null, errors: checked.errors, warnings, templateErrors: false };
  const s = checked.value;
  const template = await getTemplate(db, ctx.tenantKey, s.templateName);
  if (!template) {
    const message = `Session Template Name invalid: no template "${s.templateName}"${ctx.tenant ? ` for tenant "${ctx.tenant}"` : ''}`;
    return { session: s, template: null, errors: [{ field: 'templateName', message }], warnings, templateErrors: false };
  }
  const fixed = checkBootSets(template, s.operation, { rejectNids: opts.reject_nids, defaultRescueImage: opts.default_rescue_image });
  const images = await checkArtifacts(ctx.images, template, s.operation, opts.default_rescue_image);
  warnings.push(...fixed.warnings, ...images.warnings);
  const errors = [...fixed.errors, ...images.errors].map((e) => ({ field: 'templateName', message: `${e.field}: ${e.message}` }));
  return { session: s, template, errors, warnings, templateErrors: errors.length > 0 };
}
