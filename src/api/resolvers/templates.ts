/** Session templates: GraphQL in, domain checks, one SQL write. */
import { transaction } from '../../db/tx.ts';
import { deleteTemplate, getTemplate, listTemplates, upsertTemplate, type StoredTemplate } from '../../db/templates.ts';
import { getOptions } from '../../db/options.ts';
import {
  checkBootSets,
  EXAMPLE_TEMPLATE,
  mergeTemplatePatch,
  recordToDraft,
  validateTemplate,
  type TemplateDraft,
  type TemplatePatch,
} from '../../domain/templates.ts';
import { check, nameSchema } from '../../domain/validation.ts';
import { checkArtifacts } from '../template-checks.ts';
import { sealTemplateSecrets } from '../template-secrets.ts';
import { notFound, valueOrThrow } from '../errors.ts';
import { messages, templateView } from '../views.ts';
import type { ApiContext } from '../context.ts';
import type { Resolvers } from '../generated/types.ts';

const checkName = (name: string) => valueOrThrow(check(nameSchema, name, 'name'));

/** One write: the draft from the stored template (null: none yet), checked, its secrets sealed, stored. */
async function store(ctx: ApiContext, name: string, draftFor: (current: StoredTemplate | null) => TemplateDraft) {
  return transaction(ctx.db, async (tx) => {
    const current = await getTemplate(tx, ctx.tenantKey, name, { forUpdate: true });
    const draft = draftFor(current);
    const opts = await getOptions(tx);
    const checked = validateTemplate(draft, { rejectNids: opts.reject_nids });
    const value = valueOrThrow(checked);
    const bootSets = valueOrThrow(sealTemplateSecrets(value.bootSets, current?.bootSets, ctx.secretKey));
    const saved = await upsertTemplate(tx, ctx.tenantKey, { ...value, bootSets, name, tenant: ctx.tenant });
    return { template: templateView(saved), warnings: messages(checked.warnings) };
  });
}

export const templateResolvers: Resolvers = {
  Query: {
    sessionTemplates: async (_p, _a, ctx) => (await listTemplates(ctx.db, ctx.tenant)).map(templateView),
    sessionTemplate: async (_p, { name }, ctx) => {
      const t = await getTemplate(ctx.db, ctx.tenantKey, name);
      return t ? templateView(t) : null;
    },
    validateSessionTemplate: async (_p, { name }, ctx) => {
      const t = await getTemplate(ctx.db, ctx.tenantKey, name);
      if (!t) throw notFound('session template', name);
      const opts = await getOptions(ctx.db);
      const fixed = checkBootSets(t, 'boot', { rejectNids: opts.reject_nids });
      const images = await checkArtifacts(ctx.images, t, 'boot');
      const errors = [...fixed.errors, ...images.errors];
      return { valid: errors.length === 0, errors: messages(errors), warnings: messages([...fixed.warnings, ...images.warnings]) };
    },
    sessionTemplateExample: () => templateView(EXAMPLE_TEMPLATE),
  },
  Mutation: {
    putSessionTemplate: async (_p, { name, input }, ctx) => {
      checkName(name);
      await ctx.requireKnownTenant();
      return store(ctx, name, () => input as TemplateDraft);
    },
    patchSessionTemplate: async (_p, { name, patch }, ctx) => {
      checkName(name);
      return store(ctx, name, (current) => {
        if (!current) throw notFound('session template', name);
        return mergeTemplatePatch(recordToDraft(current), patch as TemplatePatch);
      });
    },
    deleteSessionTemplate: async (_p, { name }, ctx) => {
      if (!(await deleteTemplate(ctx.db, ctx.tenantKey, name))) throw notFound('session template', name);
      return true;
    },
  },
};
