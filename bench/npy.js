// Minimal NumPy .npy reader for the benchmark harness: format 1.0-3.0, little-endian,
// C order, the numeric dtypes ONNX Runtime's tensors take (float32/64, int8-64, uint8-64, bool).
'use strict';

const fs = require('fs');

const TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '|b1': ['bool', Uint8Array],
  '<i2': ['int16', Int16Array], '<u2': ['uint16', Uint16Array],
  '<i4': ['int32', Int32Array], '<u4': ['uint32', Uint32Array],
  '<i8': ['int64', BigInt64Array], '<u8': ['uint64', BigUint64Array],
};

function readNpy(path) {
  const bytes = fs.readFileSync(path);
  if (bytes.length < 10 || bytes.toString('latin1', 0, 6) !== '\x93NUMPY')
    throw new Error(`${path}: not a .npy file`);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const headerStart = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', headerStart, headerStart + headerLength);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const order = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) throw new Error(`${path}: malformed .npy header`);
  if (order[1] === 'True') throw new Error(`${path}: Fortran order is not supported`);
  const type = TYPES[descr[1]];
  if (!type) throw new Error(`${path}: dtype ${descr[1]} is not supported`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const count = dims.reduce((n, d) => n * d, 1);
  const start = headerStart + headerLength;
  const Array_ = type[1];
  const data = new Array_(count);  // copy: the file's data offset need not be aligned
  const view = new Uint8Array(data.buffer);
  view.set(bytes.subarray(start, start + count * Array_.BYTES_PER_ELEMENT));
  const tensorData = type[0] === 'bool' ? new Uint8Array(data.buffer) : data;
  return {type: type[0], shape: dims, data: tensorData};
}

module.exports = {readNpy};
