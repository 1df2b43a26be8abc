/** The executable schema: every schema/*.graphql file (merged type by type) plus the resolvers. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { allResolvers } from './resolvers/index.ts';
import { applyAuthorization } from './auth.ts';

export const schemaDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schema');

export function loadTypeDefs(dir = schemaDir): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'));
}

/** Every root field checks its caller first (src/api/auth.ts): a schema without that check is never built. */
export function buildSchema(): GraphQLSchema {
  return applyAuthorization(makeExecutableSchema({ typeDefs: loadTypeDefs(), resolvers: allResolvers() }));
}
