#!/usr/bin/env node
// ONNX Runtime's side of the peer benchmark (bench/onnx/compare_ort.py drives it, beside ember_onnx_worker): the CPU
// execution provider on one thread, sessions created once, timed on request so that the driver can interleave
// short blocks of both sides in one run. The line protocol on stdin / stdout is the Ember worker's:
//
//   load NAME MODEL.onnx INPUT.safetensors   -> "ok"      a session for MODEL, the input tensor "input" of the file
//   time NAME ITERS                          -> seconds   ITERS runs of NAME back to back (wall clock)
//   out NAME PATH                            -> "ok"      one run, its first output written to PATH as raw f32
//   quit
// Any failure answers "error <message>" and the worker goes on.
"use strict";
const fs = require("fs");
const path = require("path");
const readline = require("readline");
const ort = require(path.join(__dirname, "node_modules", "onnxruntime-node"));
// The native session under ort.InferenceSession: its run() is synchronous, where the public API's goes through a
// Promise and a setImmediate per call (5-10 us, more than a batch-1 MLP's whole inference), which would measure
// Node's event loop rather than ONNX Runtime. What remains per call is ORT's Run and the N-API wrapping of the input
// and output buffers, the counterpart of Ember's forward on tensors it already holds.
const { binding, initOrt } = require(path.join(__dirname, "node_modules", "onnxruntime-node", "dist", "binding"));

// The safetensors layout (u64 LE header length, JSON header, data), as tests/reference/gen_torch_safetensors.py
// writes it; only what the benchmark inputs use (F32, I64).
function readSafetensor(file, name) {
  const buf = fs.readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString("utf8"));
  const e = header[name];
  if (!e) throw new Error(`${file} has no tensor '${name}'`);
  const [begin, end] = e.data_offsets;
  const bytes = buf.subarray(8 + n + begin, 8 + n + end);
  const copy = new Uint8Array(bytes).buffer;  // aligned
  const data = { F32: () => new Float32Array(copy), I64: () => new BigInt64Array(copy) }[e.dtype];
  if (!data) throw new Error(`${file}: tensor '${name}' has dtype ${e.dtype} (F32 or I64 expected)`);
  return new ort.Tensor(e.dtype === "F32" ? "float32" : "int64", data(), e.shape);
}

const workloads = new Map();  // name -> { session, feeds }

async function handle(words) {
  const [cmd, name] = words;
  if (cmd === "load") {
    initOrt();
    const session = new binding.InferenceSession();
    session.loadModel(words[2], {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: "sequential",
      graphOptimizationLevel: "all",
    });
    const input = session.inputMetadata[0].name, output = session.outputMetadata[0].name;
    workloads.set(name, { session, output, feeds: { [input]: readSafetensor(words[3], "input") }, fetches: { [output]: null } });
    return "ok";
  }
  const w = workloads.get(name);
  if (!w) throw new Error(`unknown workload '${name}'`);
  if (cmd === "time") {
    const iters = Number(words[2]);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < iters; ++i) w.session.run(w.feeds, w.fetches, {});
    return String(Number(process.hrtime.bigint() - t0) * 1e-9);
  }
  if (cmd === "out") {
    const y = w.session.run(w.feeds, w.fetches, {})[w.output];
    fs.writeFileSync(words[2], Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
    return "ok";
  }
  throw new Error(`unknown command '${cmd}'`);
}

async function main() {
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    const words = line.trim().split(/\s+/);
    if (words[0] === "quit") break;
    let reply;
    try {
      reply = await handle(words);
    } catch (e) {
      reply = `error ${String(e.message || e).replace(/\n/g, " ")}`;
    }
    process.stdout.write(reply + "\n");
  }
  rl.close();
}

main();
