/**
 * Bodies read by the edge (input-bounds.ts readAtMost, fast-reports.ts) are parsed by body-parser
 * replayed on a request of their own (parseRead): the body, or body-parser's own answer (status,
 * type, wording) for bad JSON, a charset or encoding it refuses, a body too large once inflated, and
 * the depth bound's refusal from its verify hook.
 */
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import bodyParser from 'body-parser';
import { describe, expect, it } from 'vitest';
import { jsonTooDeep, parseRead, tooDeep } from '../../src/api/input-bounds.ts';

const parser = bodyParser.json({
  limit: 1000,
  type: () => true,
  verify: (_req, _res, buf) => {
    if (jsonTooDeep(buf)) throw tooDeep();
  },
});

/** A request as the server saw it (headers only: its body was read already). */
function original(headers: http.IncomingHttpHeaders): http.IncomingMessage {
  const req = new http.IncomingMessage(new net.Socket());
  req.headers = headers;
  return req;
}

const read = (raw: Buffer, headers: http.IncomingHttpHeaders = {}) =>
  parseRead(parser, original({ 'content-type': 'application/json', 'content-length': String(raw.length), ...headers }), raw);

const refusal = async (raw: Buffer, headers: http.IncomingHttpHeaders = {}) => {
  const r = await read(raw, headers);
  if (!('error' in r)) throw new Error(`parsed: ${JSON.stringify(r.body)}`);
  const e = r.error as Error & { status?: number; type?: string };
  return { status: e.status, type: e.type, message: e.message };
};

describe('parseRead', () => {
  it('gives the body, also gzip-encoded, UTF-16 or chunked', async () => {
    expect(await read(Buffer.from('{"a":[1,2]}'))).toEqual({ body: { a: [1, 2] } });
    expect(await read(zlib.gzipSync('{"z":true}'), { 'content-encoding': 'gzip' })).toEqual({ body: { z: true } });
    expect(await read(Buffer.from('{"u":"é"}', 'utf16le'), { 'content-type': 'application/json; charset=utf-16le' })).toEqual({
      body: { u: 'é' },
    });
    const chunked = original({ 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    expect(await parseRead(parser, chunked, Buffer.from('{"c":1}'))).toEqual({ body: { c: 1 } });
  });

  it("gives body-parser's own refusals", async () => {
    expect(await refusal(Buffer.from('{"a":'))).toEqual({
      status: 400,
      type: 'entity.parse.failed',
      message: 'Unexpected end of JSON input',
    });
    expect(await refusal(Buffer.from('"text"'))).toMatchObject({ status: 400, type: 'entity.parse.failed' });
    expect(await refusal(Buffer.from('{}'), { 'content-type': 'application/json; charset=latin1' })).toEqual({
      status: 415,
      type: 'charset.unsupported',
      message: 'unsupported charset "LATIN1"',
    });
    expect(await refusal(Buffer.from('{}'), { 'content-encoding': 'foo' })).toEqual({
      status: 415,
      type: 'encoding.unsupported',
      message: 'unsupported content encoding "foo"',
    });
    const inflated = zlib.gzipSync(JSON.stringify({ a: 'x'.repeat(5000) }));
    expect(await refusal(inflated, { 'content-encoding': 'gzip' })).toEqual({
      status: 413,
      type: 'entity.too.large',
      message: 'request entity too large',
    });
  });

  it("gives the depth bound's refusal from the verify hook", async () => {
    expect(await refusal(Buffer.from(`${'['.repeat(70)}${']'.repeat(70)}`))).toEqual({
      status: 400,
      type: 'entity.too.deep',
      message: 'JSON nested more than 64 levels deep; the limit is 64',
    });
  });
});
