#!/usr/bin/env node
// ONNX Runtime side of the kiln benchmark: loads an ONNX model with onnxruntime-node (the CPU
// library that ships inside the npm package), feeds it the same .npy inputs as `kiln bench`,
// warms up, then times session.run and prints min/p50/p90/p99/max/mean, or with --json one
// object with the same keys as `kiln bench --json` (p50_us, p99_us, min_us, max_us, mean_us,
// iterations). --expected_output checks ONNX Runtime's result against a reference .npy.
//
//   node bench/ort_bench.js MODEL.onnx --input=@x.npy [--input=@y.npy ...] [--threads=N]
//        [--iterations=N | --seconds=S] [--warmup=N] [--expected_output=@ref.npy ...]
//        [--tolerance=RTOL,ATOL]  (default 1e-3,1e-4)
//        [--json] [--async]
//   node bench/ort_bench.js --baseline     # load ONNX Runtime only: the harness's own RSS
//   node bench/ort_bench.js MODEL.onnx --input=@x.npy --profile [--iterations=N]
//        # ONNX Runtime's own profiler: per node, the median kernel time over the runs, its op
//        # type and tensor shapes, as one JSON object {"nodes": [...]}
//
// Timing goes through the binding's synchronous run (what InferenceSession.run calls after a
// setImmediate hop), so the figure is ONNX Runtime plus a few microseconds of N-API glue;
// --async times the public promise API instead.
'use strict';

const fs = require('fs');
const {readNpy} = require('./npy');

function fail(message) {
  process.stderr.write(`ort_bench: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const args = {inputs: [], expected: [], rtol: 1e-3, atol: 1e-4, threads: 1, iterations: 0,
                seconds: 2, warmup: 10,
                json: false, async: false, profile: false, model: null};
  for (const arg of argv) {
    const m = /^--([a-z_-]+)(?:=(.*))?$/.exec(arg);
    if (!m) {
      if (args.model) fail(`unexpected argument '${arg}'`);
      args.model = arg;
      continue;
    }
    const [, name, value] = m;
    const number = () => {
      const n = Number(value);
      if (value === undefined || !(n > 0)) fail(`--${name} expects a positive number`);
      return n;
    };
    const file = () => {
      if (!value || !value.startsWith('@')) fail(`--${name} expects @FILE.npy`);
      return value.slice(1);
    };
    switch (name.replace(/-/g, '_')) {
      case 'input': args.inputs.push(file()); break;
      case 'expected_output': args.expected.push(file()); break;
      case 'tolerance': {  // RTOL,ATOL as kiln run takes them
        const parts = (value || '').split(',').map(Number);
        if (parts.length !== 2 || !parts.every((x) => x >= 0)) fail('--tolerance expects RTOL,ATOL');
        [args.rtol, args.atol] = parts;
        break;
      }
      case 'threads': args.threads = number(); break;
      case 'iterations': args.iterations = number(); break;
      case 'seconds': args.seconds = number(); break;
      case 'warmup': args.warmup = number(); break;
      case 'json': args.json = true; break;
      case 'async': args.async = true; break;
      case 'profile': args.profile = true; break;
      default: fail(`unknown flag --${name}`);
    }
  }
  if (!args.model) fail('no model given');
  if (!fs.existsSync(args.model)) fail(`${args.model}: no such file`);
  return args;
}

// Opens the model once; returns its input/output names and run(feeds) => outputs (and, with
// profilePrefix, endProfiling() => the profile file's path).
async function openSession(ort, path, threads, useAsync, profilePrefix) {
  const options = {intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
                   graphOptimizationLevel: 'all'};
  if (profilePrefix) {
    options.enableProfiling = true;
    options.profileFilePrefix = profilePrefix;
  }
  if (!useAsync) {
    let raw = null;
    try {
      const {binding, initOrt} = require('onnxruntime-node/dist/binding');
      initOrt();
      raw = new binding.InferenceSession();
    } catch (e) {
      process.stderr.write(
          `ort_bench: no synchronous binding (${e.message}); timing the async API\n`);
    }
    if (raw) {
      raw.loadModel(path, options);
      const inputNames = raw.inputMetadata.map((m) => m.name);
      const outputNames = raw.outputMetadata.map((m) => m.name);
      const fetches = Object.fromEntries(outputNames.map((n) => [n, null]));
      return {inputNames, outputNames, run: async (feeds) => raw.run(feeds, fetches, {}),
              endProfiling: () => raw.endProfiling()};
    }
  }
  const session = await ort.InferenceSession.create(path, options);
  return {inputNames: session.inputNames, outputNames: session.outputNames,
          run: (feeds) => session.run(feeds), endProfiling: () => session.endProfiling()};
}

// The profile's kernel events grouped by node: median and min duration (us) over the runs, op
// type and shapes (ONNX Runtime names a node after its output after fusion, e.g.
// "/layer1/layer1.0/relu/Relu_output_0_nchwc" for a Conv fused with its Relu).
function summarizeProfile(file) {
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  const nodes = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    if (!nodes.has(name)) {
      nodes.set(name, {name, op: e.args.op_name, durations: [],
                       inputs: (e.args.input_type_shape || []).map((t) => Object.values(t)[0]),
                       outputs: (e.args.output_type_shape || []).map((t) => Object.values(t)[0])});
    }
    nodes.get(name).durations.push(e.dur);
  }
  return [...nodes.values()].map((n) => {
    const sorted = n.durations.sort((x, y) => x - y);
    return {name: n.name, op: n.op, runs: sorted.length, median_us: percentile(sorted, 0.5),
            min_us: sorted[0], inputs: n.inputs, outputs: n.outputs};
  });
}

function percentile(sorted, p) {  // nearest rank
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

function compare(got, want, name, rtol, atol) {
  const a = got.data, b = want.data;
  if (a.length !== b.length) return `${name}: ${a.length} elements, expected ${b.length}`;
  let worst = 0, worstAt = 0;
  for (let i = 0; i < a.length; ++i) {
    const excess = Math.abs(Number(a[i]) - Number(b[i])) - (atol + rtol * Math.abs(Number(b[i])));
    if (excess > worst) { worst = excess; worstAt = i; }
  }
  return worst > 0 ? `${name}: element ${worstAt} is ${a[worstAt]}, expected ${b[worstAt]}` : null;
}

async function main() {
  if (process.argv[2] === '--baseline') {
    require('onnxruntime-node/dist/binding').initOrt();
    return;
  }
  const args = parseArgs(process.argv.slice(2));
  const ort = require('onnxruntime-node');
  const profilePrefix = args.profile
      ? require('path').join(require('os').tmpdir(), `ort_bench_profile_${process.pid}`)
      : null;
  const session = await openSession(ort, args.model, args.threads, args.async, profilePrefix);
  if (args.inputs.length !== session.inputNames.length)
    fail(`${args.model} has ${session.inputNames.length} inputs, ${args.inputs.length} given`);
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    const npy = readNpy(args.inputs[i]);
    feeds[name] = new ort.Tensor(npy.type, npy.data, npy.shape);
  });

  const run = session.run;
  let outputs = await run(feeds);
  for (let i = 0; i < args.expected.length; ++i) {
    const name = session.outputNames[i];
    const problem = compare(outputs[name], readNpy(args.expected[i]), name, args.rtol, args.atol);
    if (problem) fail(`output mismatch: ${problem}`);
  }

  if (args.profile) {  // every run is profiled (warm-up included): report medians per node
    for (let i = 0; i < (args.iterations || 20); ++i) outputs = await run(feeds);
    const file = session.endProfiling();
    const nodes = summarizeProfile(file);
    fs.unlinkSync(file);
    console.log(JSON.stringify({model: args.model, threads: args.threads, nodes}));
    return;
  }
  for (let i = 0; i < args.warmup; ++i) outputs = await run(feeds);
  const times = [];
  const deadline = process.hrtime.bigint() + BigInt(Math.round(args.seconds * 1e9));
  while (args.iterations ? times.length < args.iterations
                         : times.length < 10 || process.hrtime.bigint() < deadline) {
    const start = process.hrtime.bigint();
    outputs = await run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  times.sort((x, y) => x - y);
  const result = {
    model: args.model, threads: args.threads, iterations: times.length,
    min_us: times[0], p50_us: percentile(times, 0.5), p90_us: percentile(times, 0.9),
    p99_us: percentile(times, 0.99), max_us: times[times.length - 1],
    mean_us: times.reduce((s, t) => s + t, 0) / times.length,
  };
  result.jitter = result.p99_us / result.p50_us;
  if (args.json) {
    console.log(JSON.stringify(result));
  } else {
    console.log(`onnxruntime-node ${require('onnxruntime-node/package.json').version}, ` +
                `${args.threads} thread(s), ${times.length} iterations`);
    for (const key of ['min', 'p50', 'p90', 'p99', 'max', 'mean'])
      console.log(`  ${key.padEnd(5)} ${result[key + '_us'].toFixed(1).padStart(10)} us`);
    console.log(`  jitter (p99/p50) ${result.jitter.toFixed(2)}`);
  }
}

main().catch((e) => fail(e.message));
