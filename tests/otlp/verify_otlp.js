#!/usr/bin/env node
// Checks OTLP/JSON files (ExportTraceServiceRequest, the OTLP/HTTP JSON
// encoding) against the official OpenTelemetry .proto definitions, with
// protobufjs: a tool and a schema nobody in spanprof wrote.
//
// Usage:
//   node verify_otlp.js --protobufjs DIR --protos DIR [options] FILE...
//     --protobufjs DIR     the protobufjs package folder (node_modules/protobufjs)
//     --protos DIR         the folder holding opentelemetry/proto/...
//     --remote-parent HEX  a parentSpanId that may name a span outside the
//                          file (repeatable); any other must resolve inside
//     --min-spans N        fail with fewer spans in a file
//     --expect-cross-thread  fail unless a span's parent ran on another thread
//     --expect-cross-process N  fail with fewer than N parents in another
//                          resource (process) of the file
//     --expect-error-status  fail unless a span has status ERROR
//
// Per file: JSON.parse; a strict walk of the JSON against the proto types
// (every key a field of its message, lowerCamelCase; ids hex of the right
// length, converted to bytes explicitly because proto3's JSON mapping would
// read them as base64; 64-bit integers as decimal strings; enums as
// integers); Type.fromObject + Type.verify; encode to the protobuf wire
// format and decode again, and the decoded message must give back every id
// and time of the JSON. Then the trace checks: trace ids 16 bytes, span ids
// 8 bytes, not zero, unique per trace; every parent resolves within the file
// (same trace) or is an allowed remote parent; start > 0 and end >= start.
// Prints one "ok ..." line per good file; exits 1 at the first bad one,
// saying where.
'use strict';

const fs = require('fs');
const path = require('path');

function usage(message) {
  process.stderr.write(`verify_otlp: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const options =
      {remoteParents: new Set(), minSpans: 0, crossProcess: 0, files: []};
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--protobufjs') options.protobufjs = value();
    else if (arg === '--protos') options.protos = value();
    else if (arg === '--remote-parent') options.remoteParents.add(value());
    else if (arg === '--min-spans') options.minSpans = Number(value());
    else if (arg === '--expect-cross-thread') options.crossThread = true;
    else if (arg === '--expect-cross-process') {
      options.crossProcess = Number(value());
    }
    else if (arg === '--expect-error-status') options.errorStatus = true;
    else if (arg.startsWith('--')) usage(`unknown option ${arg}`);
    else options.files.push(arg);
  }
  if (!options.protobufjs || !options.protos) {
    usage('--protobufjs and --protos are required');
  }
  if (options.files.length === 0) usage('no FILE');
  return options;
}

class CheckError extends Error {}

function fail(where, message) {
  throw new CheckError(`${where}: ${message}`);
}

function loadRoot(protobuf, protosDir) {
  const root = new protobuf.Root();
  root.resolvePath = (origin, target) =>
    path.isAbsolute(target) ? target : path.join(protosDir, target);
  root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
  root.resolveAll();
  return root;
}

const kHex = /^[0-9a-f]*$/;
// OTLP/JSON: trace and span ids are hex strings, not base64 (the one place
// where it departs from proto3's JSON mapping). Lowercase is what the
// exporter writes and what we require.
const kIdLengths = {traceId: 16, spanId: 8, parentSpanId: 8};

function hexToBytes(where, field, text) {
  if (typeof text !== 'string') fail(where, `${field} is not a string`);
  if (!kHex.test(text)) fail(where, `${field} "${text}" is not lowercase hex`);
  const bytes = kIdLengths[field];
  if (field === 'parentSpanId' && text === '') return Buffer.alloc(0);
  if (text.length !== bytes * 2) {
    fail(where, `${field} "${text}" has ${text.length} hex digits, ` +
                    `expected ${bytes * 2}`);
  }
  return Buffer.from(text, 'hex');
}

const k64BitTypes =
    new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const kIntTypes = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);

function convertScalar(where, field, value) {
  const type = field.type;
  if (k64BitTypes.has(type)) {
    // The OTLP/JSON encoding writes 64-bit integers as decimal strings.
    const pattern = type.startsWith('u') || type === 'fixed64' ? /^[0-9]+$/ :
                                                                 /^-?[0-9]+$/;
    if (typeof value !== 'string' || !pattern.test(value)) {
      fail(where, `${type} must be a decimal string, got ${
                      JSON.stringify(value)}`);
    }
    return value;
  }
  if (kIntTypes.has(type)) {
    if (!Number.isInteger(value)) fail(where, `${type} must be an integer`);
    return value;
  }
  if (type === 'double' || type === 'float') {
    if (typeof value === 'number') return value;
    if (['NaN', 'Infinity', '-Infinity'].includes(value)) return Number(value);
    fail(where, `${type} must be a number, got ${JSON.stringify(value)}`);
  }
  if (type === 'string') {
    if (typeof value !== 'string') fail(where, 'must be a string');
    return value;
  }
  if (type === 'bool') {
    if (typeof value !== 'boolean') fail(where, 'must be true or false');
    return value;
  }
  if (type === 'bytes') {
    if (kIdLengths[field.name] !== undefined) {
      return hexToBytes(where, field.name, value);
    }
    fail(where, 'bytes fields other than ids are not expected');
  }
  fail(where, `unexpected scalar type ${type}`);
}

// Walks `object` as a JSON `type` message: every key must be a field; the
// result is what Type.fromObject takes, ids as bytes.
function convertMessage(where, type, object) {
  if (object === null || typeof object !== 'object' || Array.isArray(object)) {
    fail(where, `expected a ${type.name} object`);
  }
  const out = {};
  for (const [key, value] of Object.entries(object)) {
    const field = type.fields[key];
    if (!field) fail(where, `unknown field "${key}" of ${type.fullName}`);
    const at = `${where}.${key}`;
    if (field.repeated) {
      if (!Array.isArray(value)) fail(at, 'expected an array');
      out[key] = value.map((element, i) =>
                               convertValue(`${at}[${i}]`, field, element));
    } else {
      out[key] = convertValue(at, field, value);
    }
  }
  for (const oneof of type.oneofsArray) {
    const set = oneof.fieldsArray.filter((f) => object[f.name] !== undefined);
    if (set.length > 1) fail(where, `more than one of oneof ${oneof.name}`);
  }
  return out;
}

function convertValue(where, field, value) {
  const resolved = field.resolvedType;
  if (resolved && resolved.fields) {
    return convertMessage(where, resolved, value);
  }
  if (resolved && resolved.values) {
    // Enums are integers in the OTLP/JSON encoding.
    if (!Number.isInteger(value)) fail(where, 'an enum must be an integer');
    if (!Object.values(resolved.values).includes(value)) {
      fail(where, `${value} is not a value of ${resolved.fullName}`);
    }
    return value;
  }
  return convertScalar(where, field, value);
}

function attribute(span, key) {
  for (const kv of span.attributes || []) {
    if (kv.key === key) return kv.value;
  }
  return undefined;
}

function checkFile(file, Request, options) {
  const where = '$';
  let json;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    fail(where, `not JSON: ${e.message}`);
  }
  const plain = convertMessage('$', Request, json);
  const message = Request.fromObject(plain);
  const problem = Request.verify(message);
  if (problem) fail(where, `protobufjs verify: ${problem}`);
  const wire = Request.encode(message).finish();
  const decoded = Request.toObject(Request.decode(wire), {
    longs: String,
    enums: Number,
    bytes: String,  // base64
    defaults: false,
  });

  const resources = json.resourceSpans || [];
  if (resources.length === 0) fail(where, 'no resourceSpans');
  const spans = [];   // {span, decoded, where, resource}
  resources.forEach((rs, r) => {
    const at = `$.resourceSpans[${r}]`;
    const attrs = (rs.resource && rs.resource.attributes) || [];
    const keys = new Map(attrs.map((kv) => [kv.key, kv.value]));
    const name = keys.get('service.name');
    if (!name || typeof name.stringValue !== 'string' || !name.stringValue) {
      fail(at, 'resource without a service.name string');
    }
    const pid = keys.get('process.pid');
    if (!pid || !/^[0-9]+$/.test(pid.intValue || '')) {
      fail(at, 'resource without a process.pid intValue');
    }
    (rs.scopeSpans || []).forEach((ss, s) => {
      (ss.spans || []).forEach((span, i) => {
        spans.push({
          span,
          decoded: decoded.resourceSpans[r].scopeSpans[s].spans[i],
          where: `${at}.scopeSpans[${s}].spans[${i}]`,
          resource: r,
        });
      });
    });
  });
  if (spans.length < options.minSpans) {
    fail(where, `${spans.length} spans, expected at least ${options.minSpans}`);
  }

  const byId = new Map();  // traceId/spanId -> entry
  const traceIds = new Set();
  for (const entry of spans) {
    const {span, decoded: back, where: at} = entry;
    for (const field of ['traceId', 'spanId', 'name', 'startTimeUnixNano',
                         'endTimeUnixNano']) {
      if (span[field] === undefined) fail(at, `missing ${field}`);
    }
    // The wire round trip keeps every id and time exactly.
    const hexBack = (b64) => Buffer.from(b64 || '', 'base64').toString('hex');
    if (hexBack(back.traceId) !== span.traceId ||
        hexBack(back.spanId) !== span.spanId ||
        hexBack(back.parentSpanId) !== (span.parentSpanId || '')) {
      fail(at, 'an id changed in the protobuf round trip');
    }
    if (back.startTimeUnixNano !== span.startTimeUnixNano ||
        back.endTimeUnixNano !== span.endTimeUnixNano) {
      fail(at, 'a time changed in the protobuf round trip');
    }
    if (/^0+$/.test(span.traceId)) fail(at, 'all-zero traceId');
    if (/^0+$/.test(span.spanId)) fail(at, 'all-zero spanId');
    const start = BigInt(span.startTimeUnixNano);
    const end = BigInt(span.endTimeUnixNano);
    if (start <= 0n) fail(at, 'startTimeUnixNano is not after the epoch');
    if (end < start) fail(at, `ends before it starts (${start} > ${end})`);
    const key = `${span.traceId}/${span.spanId}`;
    if (byId.has(key)) fail(at, `duplicate spanId ${span.spanId}`);
    byId.set(key, entry);
    traceIds.add(span.traceId);
  }

  let linked = 0;
  let crossThread = 0;
  let crossProcess = 0;
  let remote = 0;
  let errors = 0;
  for (const entry of spans) {
    const {span, where: at} = entry;
    if (span.status && span.status.code === 2) ++errors;
    if (!span.parentSpanId) continue;
    const parent = byId.get(`${span.traceId}/${span.parentSpanId}`);
    if (!parent) {
      if (!options.remoteParents.has(span.parentSpanId)) {
        fail(at, `parentSpanId ${span.parentSpanId} names no span of ` +
                     `trace ${span.traceId} in the file`);
      }
      ++remote;
      continue;
    }
    ++linked;
    if (parent.resource !== entry.resource) ++crossProcess;
    if (parent.resource === entry.resource) {
      const mine = attribute(span, 'thread.id');
      const theirs = attribute(parent.span, 'thread.id');
      if (mine && theirs && mine.intValue !== theirs.intValue) ++crossThread;
    }
  }
  if (crossProcess < options.crossProcess) {
    fail(where, `${crossProcess} cross-process parent links, expected at ` +
                `least ${options.crossProcess}`);
  }
  if (options.crossThread && crossThread === 0) {
    fail(where, 'no span has a parent on another thread');
  }
  if (options.errorStatus && errors === 0) {
    fail(where, 'no span has status ERROR');
  }
  process.stdout.write(
      `ok ${file}: ${resources.length} resource(s), ${spans.length} spans, ` +
      `${wire.length} protobuf bytes, trace id(s) ${[...traceIds].join(' ')}; ` +
      `${linked} parent links resolved (${crossThread} cross-thread, ` +
      `${crossProcess} cross-process), ` +
      `${remote} to a remote parent, ${errors} with status ERROR\n`);
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const protobuf = require(path.resolve(options.protobufjs));
  const root = loadRoot(protobuf, path.resolve(options.protos));
  const Request = root.lookupType(
      'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  for (const file of options.files) {
    try {
      checkFile(file, Request, options);
    } catch (e) {
      if (!(e instanceof CheckError)) throw e;
      process.stderr.write(`FAIL ${file}: ${e.message}\n`);
      process.exit(1);
    }
  }
}

main();
